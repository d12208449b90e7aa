// The uniform and bindings of firstLayerGrad.wgsl and firstLayerGradSubgroup.wgsl.

struct FirstLayerGrad {
  vocab: u32,
  context: u32,
  embed: u32,
  hidden: u32,
  embOff: u32,
  w1Off: u32,
  headOff: u32,     // the W2 | b2 range of the gradient, after b1 (paramLayout)
  headLen: u32,
  headBlock: u32,   // entries of that range per workgroup whose squares firstLayerGradSubgroup sums
}

@group(0) @binding(0) var<uniform> u: FirstLayerGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;         // flat parameters
@group(0) @binding(2) var<storage, read> G: array<f32>;              // [context, vocab, hidden] slot sums
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;    // flat gradient (paramLayout)
