/**
 * The pretrained starts that ship with the page (workers/formats/shippedStarts.ts): the committed
 * file and index are what pretraining every lesson start here writes, bit for bit; a start read
 * from the file trains the same run as one pretrained in place; bytes that do not match are never
 * used.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildStarts, lessonStartConfigs, pretrainHere, STARTS_BIN, STARTS_INDEX } from '../../cli/starts';
import { cachePretrained, clearPretrainCache, pretrainKey, setStartSource } from '../../workers/core/pretrain';
import { createCpuBackend } from '../../workers/core/cpuBackend';
import { createTrainer } from '../../workers/core/trainer';
import { SHIPPED_STARTS } from '../../workers/content/starts/index';
import { LESSONS, lessonRunConfig } from '../../workers/content/lessons';
import { fnv1a, readShippedStart, writeShippedStarts } from '../../workers/formats/shippedStarts';
import { loadShippedStart } from '../../workers/entry/loadStarts';

const bits = (x: Float32Array) => Array.from(new Uint32Array(x.buffer, x.byteOffset, x.length));
const fileBuffer = () => {
  const b = readFileSync(STARTS_BIN);
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
};

describe('shipped pretrained starts', () => {
  it('the committed files are what `npm run -s starts` writes now (else run it)', () => {
    const built = buildStarts();
    expect(readFileSync(STARTS_INDEX, 'utf8'), 'workers/content/starts/index.ts is stale: npm run -s starts').toBe(built.index);
    expect(fnv1a(readFileSync(STARTS_BIN)), 'workers/content/starts/starts.bin is stale: npm run -s starts').toBe(fnv1a(built.bin));
    // Every lesson's pretrained runs, on the lesson seeds: the collapse and sampler lessons today.
    expect(built.count).toBe(lessonStartConfigs().length);
    expect(built.count).toBeGreaterThanOrEqual(8);
  }, 120_000);

  it('a start read from the file has the bits of pretraining it here, and trains the same run', async () => {
    const collapse = LESSONS.find((l) => l.id === 'collapse')!;
    const cfg = lessonRunConfig(collapse.runs.find((r) => r.id === 'edge')!, 2);
    const start = SHIPPED_STARTS.find((s) => s.key === pretrainKey(cfg))!;
    expect(start).toBeDefined();
    const read = readShippedStart(fileBuffer(), start)!;
    const here = pretrainHere(cfg);
    expect(bits(read)).toEqual(bits(here.params));
    expect([start.demoLoss, start.demoSuccess]).toEqual([here.demoLoss, here.demoSuccess]);

    const rows = async () => {
      const t = await createTrainer(cfg, createCpuBackend);
      const out = [];
      for (let i = 0; i < 3; i++) out.push(await t.step());
      const pre = t.pretrain!;
      t.destroy();
      return { rows: out.map(({ ms, ...r }) => r), start: [pre.startSuccess, pre.scratchSuccess, pre.demoLoss, pre.shipped] };
    };
    clearPretrainCache();
    const pretrained = await rows();
    clearPretrainCache();
    cachePretrained(start.key, { params: read, demoLoss: start.demoLoss, demoSuccess: start.demoSuccess, ms: 0, shipped: true });
    const shipped = await rows();
    expect(shipped.rows).toEqual(pretrained.rows);
    expect(shipped.start).toEqual([...pretrained.start.slice(0, 3), true]);
    expect(pretrained.start[3]).toBe(false);
    clearPretrainCache();
  }, 120_000);

  it('bytes that do not hash as indexed, or a file too short, give nothing', () => {
    const buf = fileBuffer();
    const start = SHIPPED_STARTS[1]!;
    expect(readShippedStart(buf, start)).not.toBeNull();
    const flipped = buf.slice(0);
    new Uint8Array(flipped)[start.offset * 4 + 5]! ^= 1;
    expect(readShippedStart(flipped, start)).toBeNull();
    expect(readShippedStart(buf.slice(0, start.offset * 4 + 8), start)).toBeNull();
    expect(readShippedStart(buf, { ...start, offset: -1 })).toBeNull();
  });

  it('the writer and the reader agree on every float, -0, NaN and subnormals included', () => {
    const params = Float32Array.from([0, -0, 1.5, -3.25e-41, 3.4e38, NaN, -Infinity]);
    const { file, index } = writeShippedStarts([{ key: 'k', params, demoLoss: 1, demoSuccess: 0 }]);
    expect(bits(readShippedStart(file.buffer as ArrayBuffer, index[0]!)!)).toEqual(bits(params));
  });

  it('createTrainer asks the start source (the worker sets the shipped file) before a pretrained run, not before a scratch one', async () => {
    const cfg = lessonStartConfigs()[0]!;
    const start = SHIPPED_STARTS.find((s) => s.key === pretrainKey(cfg))!;
    const asked: string[] = [];
    setStartSource(async (c) => {
      asked.push(c.init.mode);
      cachePretrained(pretrainKey(c), { params: readShippedStart(fileBuffer(), start)!, demoLoss: start.demoLoss, demoSuccess: start.demoSuccess, ms: 0, shipped: true });
    });
    try {
      clearPretrainCache();
      const t = await createTrainer(cfg, createCpuBackend);
      expect(t.pretrain!.shipped).toBe(true);
      t.destroy();
      // Cached now: not asked again; a scratch run never asks.
      (await createTrainer(cfg, createCpuBackend)).destroy();
      (await createTrainer({ ...cfg, init: { ...cfg.init, mode: 'scratch' } }, createCpuBackend)).destroy();
      expect(asked).toEqual(['pretrained']);
    } finally {
      setStartSource(null);
      clearPretrainCache();
    }
  });

  it('where the file cannot be fetched (Node here), a run pretrains as before', async () => {
    clearPretrainCache();
    const cfg = lessonStartConfigs()[0]!;
    expect(await loadShippedStart(cfg)).toBe(false);
    // A config the file does not hold is not looked up at all.
    expect(await loadShippedStart({ ...cfg, seed: 987654 })).toBe(false);
  });
});
