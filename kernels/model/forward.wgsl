// The policy's forward: embedProject (the first layer's table), then forwardHidden and
// forwardLogits, each an entry point of this file with its own uniform (all at binding 0: no entry
// point uses two) over shared buffer declarations (each binds the ones it uses; host side:
// kernels/model/mlpKernels.ts). References: embedProjectCpu and forwardCpu in mlp.ts.

@group(0) @binding(0) var<uniform> uEmbed: EmbedProject;
@group(0) @binding(0) var<uniform> uHidden: ForwardHidden;
@group(0) @binding(0) var<uniform> uLogits: ForwardLogits;
@group(0) @binding(1) var<storage, read> params: array<f32>;  // flat parameters (mlp.ts paramLayout)
@group(0) @binding(2) var<storage, read_write> proj: array<f32>;  // [context, vocab, hidden]
@group(0) @binding(3) var<storage, read> seq: array<u32>;  // [N, seqLen] tokens
@group(0) @binding(4) var<storage, read> rowPos: array<u32>;  // [rows] flat positions
@group(0) @binding(5) var<storage, read_write> hOut: array<f32>;  // [rows, hidden]
@group(0) @binding(6) var<storage, read> grammar: array<u32>;  // [vocab, vocab] 0/1 allowed[prev, next]
@group(0) @binding(7) var<storage, read> h: array<f32>;  // [rows, hidden] (forwardHidden.wgsl)
@group(0) @binding(8) var<storage, read_write> zOut: array<f32>;  // [rows, vocab]

override workgroupSize: u32 = 64;

// The first layer factored through the vocabulary, one thread per output (reference:
// embedProjectCpu in mlp.ts):  proj[k, t, j] = sum_d emb[t, d] W1[k * embed + d, j]   [context, vocab, hidden]
// summed over d in order. Context slot k of every row holds one of `vocab` tokens, so forward.wgsl
// adds one proj row per slot instead of K * embed products per hidden unit and row; this table is
// made once per parameter set. Thread o = (k * vocab + t) * hidden + j: neighbours share emb[t, d]
// and read W1 along a row.

@compute @workgroup_size(workgroupSize)
fn embedProject(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let o = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (o >= uEmbed.context * uEmbed.vocab * uEmbed.hidden) {
    return;
  }
  let slot = o / uEmbed.hidden; // k * vocab + t
  let j = o - slot * uEmbed.hidden;
  let k = slot / uEmbed.vocab;
  let t = slot - k * uEmbed.vocab;
  let e = uEmbed.embOff + t * uEmbed.embed;
  let w = uEmbed.w1Off + k * uEmbed.embed * uEmbed.hidden + j;
  var acc = 0.0;
  for (var d = 0u; d < uEmbed.embed; d++) {
    acc += params[e + d] * params[w + d * uEmbed.hidden];
  }
  proj[o] = acc;
}

// MLP forward, stage 1 of 2: the hidden layer, one thread per (row, hidden unit) (reference: the h
// of forwardCpu in mlp.ts):
//   h[r, j] = tanh(b1[j] + sum_k proj[k, ctx_k(r), j])       summed over k in order
// with proj [context, vocab, hidden] the first layer factored through the vocabulary
// (embedProject.wgsl, made from the same parameters); a context token outside the vocabulary reads
// as PAD (vocabToken). Row r predicts flat position rowPos[rowBase + r]; h goes to row outBase + r.
// No workgroup memory or barriers: neighbouring threads are neighbouring j of one row, so their
// proj reads are adjacent and the row's context tokens are the same few words.

@compute @workgroup_size(workgroupSize)
fn forwardHidden(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= uHidden.numRows * uHidden.hidden) {
    return;
  }
  let r = i / uHidden.hidden;
  let j = i - r * uHidden.hidden;
  let pos = rowPos[uHidden.rowBase + r];
  var acc = params[uHidden.b1Off + j];
  for (var k = 0u; k < uHidden.context; k++) {
    let q = contextIndex(pos, uHidden.seqLen, uHidden.context, k);
    let tok = vocabToken(select(0u, seq[max(q, 0)], q >= 0), uHidden.vocab);
    acc += proj[(k * uHidden.vocab + tok) * uHidden.hidden + j];
  }
  hOut[(uHidden.outBase + r) * uHidden.hidden + j] = safeTanh(acc);
}

// MLP forward, stage 2 of 2: the logits, one thread per (row, vocabulary entry) (reference: the z
// of forwardCpu in mlp.ts):
//   z[r, v] = grammarMask((b2[v] + sum_j h[r, j] W2[j, v]) / temperature)   summed over j in order
// reading the h that forwardHidden.wgsl wrote. The grammar row is the previous token (PAD at a
// sequence start, which rows never are); a forbidden token gets MASKED_LOGIT exactly. Row r is
// rowPos[rowBase + r]; h and z are row outBase + r. Neighbouring threads are neighbouring v of one
// row: they read adjacent W2 entries and the same h word.

@compute @workgroup_size(workgroupSize)
fn forwardLogits(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= uLogits.numRows * uLogits.vocab) {
    return;
  }
  let r = i / uLogits.vocab;
  let v = i - r * uLogits.vocab;
  let pos = rowPos[uLogits.rowBase + r];
  let out = uLogits.outBase + r;
  let prev = select(0u, seq[max(pos, 1u) - 1u], pos % uLogits.seqLen != 0u);
  var z = MASKED_LOGIT;
  if (grammar[prev * uLogits.vocab + v] != 0u) {
    var acc = params[uLogits.b2Off + v];
    for (var j = 0u; j < uLogits.hidden; j++) {
      acc += h[out * uLogits.hidden + j] * params[uLogits.w2Off + j * uLogits.vocab + v];
    }
    z = acc / uLogits.temperature;
  }
  zOut[out * uLogits.vocab + v] = z;
}
