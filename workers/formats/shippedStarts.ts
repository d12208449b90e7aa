/**
 * The file of pretrained starts that ships with the page: the weights `init=pretrained` gives the
 * lessons' runs on their seeds, so opening a lesson does not first pretrain on demonstrations in
 * the page (about half of the collapse lesson's first step on a 2-core machine). One binary file,
 * every start's float32 weights one after another in little-endian order, and an index
 * (workers/content/starts/index.ts) that names each start by its cache key (pretrainKey: every
 * input the weights depend on) with its place, its length and an FNV-1a hash of its bytes.
 *
 * A start is used only when its key is the run's key and its bytes hash as indexed; anything else
 * (a config the file does not hold, a file that failed to load or does not match) pretrains in
 * the page as before, to the same bits. `npm run -s starts` writes both files;
 * tests/unit/shippedStarts.test.ts pretrains every start again and compares the bits.
 */

/** One start in the file. */
export interface ShippedStart {
  /** pretrainKey(cfg) of the runs it starts. */
  key: string;
  /** Offset and length in float32 values. */
  offset: number;
  length: number;
  /** FNV-1a (32-bit) of its bytes, as 8 hex digits. */
  fnv: string;
  /** Pretraining's reported figures (workers/core/pretrain.ts PretrainResult). */
  demoLoss: number;
  demoSuccess: number;
}

/** FNV-1a over bytes, as 8 hex digits. */
export function fnv1a(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) {
    h ^= bytes[i]!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/** The weights of `start` in `file`, or null where the file is too short or the bytes do not hash as indexed. */
export function readShippedStart(file: ArrayBuffer, start: ShippedStart): Float32Array | null {
  const from = start.offset * 4;
  const bytes = start.length * 4;
  if (!Number.isInteger(from) || from < 0 || from + bytes > file.byteLength) return null;
  const raw = new Uint8Array(file, from, bytes);
  if (fnv1a(raw) !== start.fnv) return null;
  const view = new DataView(file, from, bytes);
  const out = new Float32Array(start.length);
  for (let i = 0; i < start.length; i++) out[i] = view.getFloat32(4 * i, true);
  return out;
}

/** The file holding `starts` in order (their offsets are assigned here) and their index entries. */
export function writeShippedStarts(starts: ReadonlyArray<Omit<ShippedStart, 'offset' | 'length' | 'fnv'> & { params: Float32Array }>): { file: Uint8Array; index: ShippedStart[] } {
  const total = starts.reduce((a, s) => a + s.params.length, 0);
  const file = new Uint8Array(total * 4);
  const view = new DataView(file.buffer);
  const index: ShippedStart[] = [];
  let offset = 0;
  for (const s of starts) {
    for (let i = 0; i < s.params.length; i++) view.setFloat32(4 * (offset + i), s.params[i]!, true);
    const fnv = fnv1a(file.subarray(4 * offset, 4 * (offset + s.params.length)));
    index.push({ key: s.key, offset, length: s.params.length, fnv, demoLoss: s.demoLoss, demoSuccess: s.demoSuccess });
    offset += s.params.length;
  }
  return { file, index };
}
