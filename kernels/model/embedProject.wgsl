// The first layer factored through the vocabulary, one thread per output (reference:
// embedProjectCpu in mlp.ts):  proj[k, t, j] = sum_d emb[t, d] W1[k * embed + d, j]   [context, vocab, hidden]
// summed over d in order. Context slot k of every row holds one of `vocab` tokens, so forward.wgsl
// adds one proj row per slot instead of K * embed products per hidden unit and row; this table is
// made once per parameter set. Thread o = (k * vocab + t) * hidden + j: neighbours share emb[t, d]
// and read W1 along a row.

struct EmbedProject {
  vocab: u32,
  context: u32,
  embed: u32,
  hidden: u32,
  embOff: u32,
  w1Off: u32,
}

@group(0) @binding(0) var<uniform> u: EmbedProject;
@group(0) @binding(1) var<storage, read> params: array<f32>;       // flat parameters (mlp.ts paramLayout)
@group(0) @binding(2) var<storage, read_write> proj: array<f32>;   // [context, vocab, hidden]

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let o = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (o >= u.context * u.vocab * u.hidden) {
    return;
  }
  let slot = o / u.hidden; // k * vocab + t
  let j = o - slot * u.hidden;
  let k = slot / u.vocab;
  let t = slot - k * u.vocab;
  let e = u.embOff + t * u.embed;
  let w = u.w1Off + k * u.embed * u.hidden + j;
  var acc = 0.0;
  for (var d = 0u; d < u.embed; d++) {
    acc += params[e + d] * params[w + d * u.hidden];
  }
  proj[o] = acc;
}
