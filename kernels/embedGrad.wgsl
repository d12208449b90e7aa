// Embedding gradient, pass 1 of a two-level row reduction (kernels/reduce.ts; reference:
// embedGradCpu in mlp.ts):  demb[t, d] = sum_r sum_k [ctx_k(r) = t] dx[r, k * embed + d].
// One invocation per (row chunk c, embedding column d) owns column d of chunk c's table
// partials[c, 0..vocab, d]: it zeroes it, then scatters the dx of its rows into it in (row, slot)
// order, so each (t, d) of a chunk sums its terms in the reference's order and no two invocations
// write the same word (no atomics). Work R * K * embed, where a per-(t, d) gather was
// vocab * embed * R * K. Chunk c holds rows rowBase + c * rowsPerChunk onwards (at most
// rowsPerChunk, never past rowBase + numRows). chunkSum.wgsl then adds the chunks in order.

struct EmbedGrad {
  numRows: u32,
  rowBase: u32,
  seqLen: u32,
  vocab: u32,
  context: u32,
  embed: u32,
  rowsPerChunk: u32,
  chunks: u32,
}

@group(0) @binding(0) var<uniform> u: EmbedGrad;
@group(0) @binding(1) var<storage, read> seq: array<u32>;            // [N, seqLen] tokens
@group(0) @binding(2) var<storage, read> rowPos: array<u32>;         // [rows] flat positions
@group(0) @binding(3) var<storage, read> dx: array<f32>;             // [rows, context * embed]
@group(0) @binding(4) var<storage, read_write> partials: array<f32>; // [chunks, vocab, embed]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let idx = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (idx >= u.chunks * u.embed) {
    return;
  }
  let c = idx / u.embed;
  let d = idx - c * u.embed;
  let table = c * u.vocab * u.embed;
  for (var t = 0u; t < u.vocab; t++) {
    partials[table + t * u.embed + d] = 0.0;
  }
  let inputs = u.context * u.embed;
  let r0 = u.rowBase + c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.rowBase + u.numRows);
  for (var r = r0; r < r1; r++) {
    let pos = rowPos[r];
    for (var k = 0u; k < u.context; k++) {
      let q = contextIndex(pos, u.seqLen, u.context, k);
      let tok = select(0u, seq[max(q, 0)], q >= 0);
      // A token outside the vocabulary (never written by the task) matches no embedding row.
      if (tok < u.vocab) {
        let at = table + tok * u.embed + d;
        partials[at] = partials[at] + dx[r * inputs + k * u.embed + d];
      }
    }
  }
}
