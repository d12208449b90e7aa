// MLP forward, stage 1 of 2: the hidden layer, one thread per (row, hidden unit) (reference: the h
// of forwardCpu in mlp.ts):
//   h[r, j] = tanh(b1[j] + sum_k proj[k, ctx_k(r), j])       summed over k in order
// with proj [context, vocab, hidden] the first layer factored through the vocabulary
// (embedProject.wgsl, made from the same parameters); a context token outside the vocabulary reads
// as PAD (vocabToken). Row r predicts flat position rowPos[rowBase + r]; h goes to row outBase + r.
// No workgroup memory or barriers: neighbouring threads are neighbouring j of one row, so their
// proj reads are adjacent and the row's context tokens are the same few words.

struct ForwardHidden {
  numRows: u32,
  rowBase: u32,
  outBase: u32,
  seqLen: u32,
  vocab: u32,
  context: u32,
  hidden: u32,
  b1Off: u32,
}

@group(0) @binding(0) var<uniform> u: ForwardHidden;
@group(0) @binding(1) var<storage, read> params: array<f32>;       // flat parameters (mlp.ts paramLayout)
@group(0) @binding(2) var<storage, read> proj: array<f32>;         // [context, vocab, hidden] (embedProject.wgsl)
@group(0) @binding(3) var<storage, read> seq: array<u32>;          // [N, seqLen] tokens
@group(0) @binding(4) var<storage, read> rowPos: array<u32>;       // [rows] flat positions
@group(0) @binding(5) var<storage, read_write> hOut: array<f32>;   // [rows, hidden]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows * u.hidden) {
    return;
  }
  let r = i / u.hidden;
  let j = i - r * u.hidden;
  let pos = rowPos[u.rowBase + r];
  var acc = params[u.b1Off + j];
  for (var k = 0u; k < u.context; k++) {
    let q = contextIndex(pos, u.seqLen, u.context, k);
    let tok = vocabToken(select(0u, seq[max(q, 0)], q >= 0), u.vocab);
    acc += proj[(k * u.vocab + tok) * u.hidden + j];
  }
  hOut[(u.outBase + r) * u.hidden + j] = safeTanh(acc);
}
