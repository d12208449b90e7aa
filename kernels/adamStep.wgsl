// Declarations shared by adam.wgsl and adamMerged.wgsl (host side: adamKernel, adamMergedKernel in
// adam.ts), joined after each one's own source: the uniform and the update of one parameter.

struct Adam {
  n: u32,
  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  bc1: f32,
  bc2: f32,
  maxGradNorm: f32,
  oneMinusBeta1: f32, // 1 - beta1 rounded once from float64: 1 - f32(0.999) is off by 1.3e-5 relative
  oneMinusBeta2: f32,
  blocks: u32,        // gradNorm's blocks of the gradient (adamMerged.wgsl sums their partials)
}

// A NaN or Inf norm (exponent bits all ones) skips the step.
fn normIsFinite(norm: f32) -> bool {
  return (bitcast<u32>(norm) & 0x7f800000u) != 0x7f800000u;
}

fn clipFactor(norm: f32) -> f32 {
  var s = 1.0;
  if (u.maxGradNorm > 0.0) {
    s = min(1.0, u.maxGradNorm / (norm + 1e-6));
  }
  return s;
}

// Parameter i from its values p, grad, m0, v0 as read, the clip factor s and the lr factor lrs.
fn adamUpdate(i: u32, p: f32, grad: f32, m0: f32, v0: f32, s: f32, lrs: f32) {
  let g = grad * s;
  let mi = u.beta1 * m0 + u.oneMinusBeta1 * g;
  let vi = u.beta2 * v0 + u.oneMinusBeta2 * g * g;
  m[i] = mi;
  v[i] = vi;
  params[i] = p - (u.lr * lrs * (mi / u.bc1)) / (sqrt(vi / u.bc2) + u.eps);
}
