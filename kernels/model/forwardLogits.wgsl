// MLP forward, stage 2 of 2: the logits, one thread per (row, vocabulary entry) (reference: the z
// of forwardCpu in mlp.ts):
//   z[r, v] = grammarMask((b2[v] + sum_j h[r, j] W2[j, v]) / temperature)   summed over j in order
// reading the h that forwardHidden.wgsl wrote. The grammar row is the previous token (PAD at a
// sequence start, which rows never are); a forbidden token gets MASKED_LOGIT exactly. Row r is
// rowPos[rowBase + r]; h and z are row outBase + r. Neighbouring threads are neighbouring v of one
// row: they read adjacent W2 entries and the same h word.

struct ForwardLogits {
  numRows: u32,
  rowBase: u32,
  outBase: u32,
  seqLen: u32,
  vocab: u32,
  hidden: u32,
  w2Off: u32,
  b2Off: u32,
  temperature: f32,
}

@group(0) @binding(0) var<uniform> u: ForwardLogits;
@group(0) @binding(1) var<storage, read> params: array<f32>;       // flat parameters
@group(0) @binding(2) var<storage, read> seq: array<u32>;          // [N, seqLen] tokens
@group(0) @binding(3) var<storage, read> rowPos: array<u32>;       // [rows] flat positions
@group(0) @binding(4) var<storage, read> grammar: array<u32>;      // [vocab, vocab] 0/1 allowed[prev, next]
@group(0) @binding(5) var<storage, read> h: array<f32>;            // [rows, hidden] (forwardHidden.wgsl)
@group(0) @binding(6) var<storage, read_write> zOut: array<f32>;   // [rows, vocab]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.numRows * u.vocab) {
    return;
  }
  let r = i / u.vocab;
  let v = i - r * u.vocab;
  let pos = rowPos[u.rowBase + r];
  let out = u.outBase + r;
  let prev = select(0u, seq[max(pos, 1u) - 1u], pos % u.seqLen != 0u);
  var z = MASKED_LOGIT;
  if (grammar[prev * u.vocab + v] != 0u) {
    var acc = params[u.b2Off + v];
    for (var j = 0u; j < u.hidden; j++) {
      acc += h[out * u.hidden + j] * params[u.w2Off + j * u.vocab + v];
    }
    z = acc / u.temperature;
  }
  zOut[out * u.vocab + v] = z;
}
