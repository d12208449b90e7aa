// MLP forward for a set of rows, one workgroup per row (reference: forwardCpu in mlp.ts):
//   h[r, j] = tanh(b1[j] + sum_k proj[k, ctx_k(r), j]),  z = grammarMask((h W2 + b2) / temperature),
// with proj [context, vocab, hidden] the first layer factored through the vocabulary
// (embedProject.wgsl, made from the same parameters), summed over k in order. A context token
// outside the vocabulary reads as PAD (vocabToken). Row r predicts flat position rowPos[rowBase + r];
// outputs go to row outBase + r.

struct Forward {
  numRows: u32,
  rowBase: u32,
  outBase: u32,
  seqLen: u32,
  vocab: u32,
  context: u32,
  hidden: u32,
  b1Off: u32,
  w2Off: u32,
  b2Off: u32,
  temperature: f32,
}

@group(0) @binding(0) var<uniform> u: Forward;
@group(0) @binding(1) var<storage, read> params: array<f32>;       // flat parameters (mlp.ts paramLayout)
@group(0) @binding(2) var<storage, read> proj: array<f32>;         // [context, vocab, hidden] (embedProject.wgsl)
@group(0) @binding(3) var<storage, read> seq: array<u32>;          // [N, seqLen] tokens
@group(0) @binding(4) var<storage, read> rowPos: array<u32>;       // [rows] flat positions
@group(0) @binding(5) var<storage, read> grammar: array<u32>;      // [vocab, vocab] 0/1 allowed[prev, next]
@group(0) @binding(6) var<storage, read_write> hOut: array<f32>;   // [rows, hidden]
@group(0) @binding(7) var<storage, read_write> zOut: array<f32>;   // [rows, vocab]

override workgroupSize: u32 = 64;
const MAX_HIDDEN: u32 = 1024u;
const MAX_CONTEXT: u32 = 32u;

var<workgroup> hs: array<f32, MAX_HIDDEN>;
// Row offsets (k * vocab + token) * hidden of the row's proj rows, one per context slot.
var<workgroup> ctxRow: array<u32, MAX_CONTEXT>;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let r = flatWorkgroup(wid, nwg);
  if (r >= u.numRows) {
    return;
  }
  let pos = rowPos[u.rowBase + r];
  for (var k = lid; k < u.context; k += workgroupSize) {
    let q = contextIndex(pos, u.seqLen, u.context, k);
    let tok = vocabToken(select(0u, seq[max(q, 0)], q >= 0), u.vocab);
    ctxRow[k] = (k * u.vocab + tok) * u.hidden;
  }
  workgroupBarrier();

  let out = u.outBase + r;
  for (var j = lid; j < u.hidden; j += workgroupSize) {
    var acc = params[u.b1Off + j];
    for (var k = 0u; k < u.context; k++) {
      acc += proj[ctxRow[k] + j];
    }
    let hv = safeTanh(acc);
    hs[j] = hv;
    hOut[out * u.hidden + j] = hv;
  }
  workgroupBarrier();

  // The grammar row is the previous token (PAD at a sequence start, which rows never are).
  let prev = select(0u, seq[max(pos, 1u) - 1u], pos % u.seqLen != 0u);
  for (var v = lid; v < u.vocab; v += workgroupSize) {
    var z = MASKED_LOGIT;
    if (grammar[prev * u.vocab + v] != 0u) {
      var acc = params[u.b2Off + v];
      for (var j = 0u; j < u.hidden; j++) {
        acc += hs[j] * params[u.w2Off + j * u.vocab + v];
      }
      z = acc / u.temperature;
    }
    zOut[out * u.vocab + v] = z;
  }
}
