// Row gradients gathered by context slot and token, pass 1 of a two-level row reduction
// (kernels/reduce.ts; reference: slotGradCpu in mlp.ts):
//   G[k, t, j] = sum_r [ctx_k(r) = t] da[r, j]      [context, vocab, hidden]
// with a context token outside the vocabulary read as PAD (vocabToken). One invocation per
// (row chunk c, slot k, hidden unit j) owns column j of slot k of chunk c's table
// partials[c, k, 0..vocab, j]: it zeroes it, then scatters the da of its rows into it in row order,
// so each (k, t, j) of a chunk sums its terms in the reference's order and no two invocations write
// the same word (no atomics). Work R * context * hidden, where a per-(k, t, j) gather was vocab
// times that. Neighbouring invocations differ in j: their da reads and table writes are adjacent.
// Chunk c holds rows rowBase + c * rowsPerChunk onwards (at most rowsPerChunk, never past
// rowBase + numRows). chunkSum.wgsl then adds the chunks in order into G.

struct SlotGrad {
  numRows: u32,
  rowBase: u32,
  seqLen: u32,
  vocab: u32,
  context: u32,
  hidden: u32,
  rowsPerChunk: u32,
  chunks: u32,
}

@group(0) @binding(0) var<uniform> u: SlotGrad;
@group(0) @binding(1) var<storage, read> seq: array<u32>;            // [N, seqLen] tokens
@group(0) @binding(2) var<storage, read> rowPos: array<u32>;         // [rows] flat positions
@group(0) @binding(3) var<storage, read> da: array<f32>;             // [rows, hidden]
@group(0) @binding(4) var<storage, read_write> partials: array<f32>; // [chunks, context, vocab, hidden]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let perChunk = u.context * u.hidden;
  if (idx >= u.chunks * perChunk) {
    return;
  }
  let c = idx / perChunk;
  let rest = idx - c * perChunk;
  let k = rest / u.hidden;
  let j = rest - k * u.hidden;
  // Column j of slot k's [vocab, hidden] block in chunk c's table.
  let column = (c * u.context + k) * u.vocab * u.hidden + j;
  for (var t = 0u; t < u.vocab; t++) {
    partials[column + t * u.hidden] = 0.0;
  }
  let r0 = u.rowBase + c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.rowBase + u.numRows);
  for (var r = r0; r < r1; r++) {
    let q = contextIndex(rowPos[r], u.seqLen, u.context, k);
    let tok = vocabToken(select(0u, seq[max(q, 0)], q >= 0), u.vocab);
    let at = column + tok * u.hidden;
    partials[at] = partials[at] + da[r * u.hidden + j];
  }
}
