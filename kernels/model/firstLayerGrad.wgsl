// Embedding and first-layer gradients from the slot sums G, one thread per output of the adjacent
// emb | W1 | b1 range of the gradient (reference: firstLayerGradCpu in mlp.ts):
//   demb[t, d]      = sum_k sum_j W1[k * embed + d, j] G[k, t, j]   (k outer, j inner)
//   dW1[k * embed + d, j] = sum_t emb[t, d] G[k, t, j]               (t in order)
//   db1[j]          = sum_t G[0, t, j]                               (every row has one token in slot 0)
// G [context, vocab, hidden] is backward.wgsl slotGrad's output. Thread o writes grads[embOff + o]:
// o < vocab * embed is demb, then context * embed * hidden entries of dW1, then hidden of db1.
// V * K * D * H multiply-adds each for demb and dW1, whatever the row count.
// The uniform, the bindings and the W1 and b1 outputs here are firstLayerGradSubgroup.wgsl's too:
// its source is this file's followed by its own entry point.

@group(0) @binding(0) var<uniform> u: FirstLayerGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;         // flat parameters
@group(0) @binding(2) var<storage, read> G: array<f32>;              // [context, vocab, hidden] slot sums
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;    // flat gradient (paramLayout)

override workgroupSize: u32 = 64;

fn embGrad(t: u32, d: u32) -> f32 {
  var acc = 0.0;
  for (var k = 0u; k < u.context; k++) {
    let w = u.w1Off + (k * u.embed + d) * u.hidden;
    let s = (k * u.vocab + t) * u.hidden;
    for (var j = 0u; j < u.hidden; j++) {
      acc += params[w + j] * G[s + j];
    }
  }
  return acc;
}

@compute @workgroup_size(workgroupSize)
fn firstLayerGrad(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let o = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  let nEmb = u.vocab * u.embed;
  if (o < nEmb) {
    grads[u.embOff + o] = embGrad(o / u.embed, o % u.embed);
  } else {
    writeWeightGrad(o);
  }
}

// The weight and bias gradients, V terms each (one thread per output in both versions).
fn w1Grad(k: u32, d: u32, j: u32) -> f32 {
  var acc = 0.0;
  for (var t = 0u; t < u.vocab; t++) {
    acc += params[u.embOff + t * u.embed + d] * G[(k * u.vocab + t) * u.hidden + j];
  }
  return acc;
}

fn b1Grad(j: u32) -> f32 {
  var acc = 0.0;
  for (var t = 0u; t < u.vocab; t++) {
    acc += G[t * u.hidden + j];
  }
  return acc;
}

// Gradient output o >= vocab * embed of the emb | W1 | b1 range (a weight of W1, then a bias),
// written to grads[embOff + o]; nothing past the range.
fn writeWeightGrad(o: u32) {
  let nEmb = u.vocab * u.embed;
  let nW1 = u.context * u.embed * u.hidden;
  if (o >= nEmb + nW1 + u.hidden) {
    return;
  }
  var g: f32;
  if (o < nEmb + nW1) {
    let i = o - nEmb;
    let row = i / u.hidden; // k * embed + d
    g = w1Grad(row / u.embed, row % u.embed, i % u.hidden);
  } else {
    g = b1Grad(o - nEmb - nW1);
  }
  grads[u.embOff + o] = g;
}
