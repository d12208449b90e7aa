/**
 * The worker's side of the starts that ship with the page (workers/formats/shippedStarts.ts), its
 * start source (trainer.worker.ts sets it; createTrainer asks it, through prepareStart, for a
 * pretrained start not yet cached): the file is fetched once per worker (only if the run's key is
 * in its index) and the start put in the pretraining cache, so the run skips pretraining and
 * starts from the same bits. A fetch that fails or bytes that do not match leave the cache alone:
 * the run pretrains in the worker as it would without the file.
 */
import type { RunConfig } from '../core/config';
import { cachePretrained, pretrainKey } from '../core/pretrain';
import { SHIPPED_STARTS } from '../content/starts/index';
import { readShippedStart } from '../formats/shippedStarts';

const FILE_URL = new URL('../content/starts/starts.bin', import.meta.url);
let file: Promise<ArrayBuffer | null> | null = null;

/** Puts `cfg`'s shipped start in the pretraining cache when there is one; true when it did. */
export async function loadShippedStart(cfg: RunConfig): Promise<boolean> {
  const key = pretrainKey(cfg);
  const start = SHIPPED_STARTS.find((s) => s.key === key);
  if (!start) return false;
  file ??= fetchFile();
  const buf = await file;
  const params = buf && readShippedStart(buf, start);
  if (!params) return false;
  cachePretrained(key, { params, demoLoss: start.demoLoss, demoSuccess: start.demoSuccess, ms: 0, shipped: true });
  return true;
}

async function fetchFile(): Promise<ArrayBuffer | null> {
  try {
    const r = await fetch(FILE_URL);
    return r.ok ? await r.arrayBuffer() : null;
  } catch {
    // Node (the CLI and unit tests) cannot fetch a file: URL, and a page may be offline: pretrain.
    return null;
  }
}
