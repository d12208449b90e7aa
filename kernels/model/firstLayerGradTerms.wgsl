// The weight and bias gradients of the first layer, V terms each, for firstLayerGrad.wgsl and
// firstLayerGradSubgroup.wgsl (one thread per output in both).

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
