// The uniform and bindings of firstLayerGrad.wgsl and firstLayerGradSubgroup.wgsl.

struct FirstLayerGrad {
  vocab: u32,
  context: u32,
  embed: u32,
  hidden: u32,
  embOff: u32,
  w1Off: u32,
}

@group(0) @binding(0) var<uniform> u: FirstLayerGrad;
@group(0) @binding(1) var<storage, read> params: array<f32>;         // flat parameters
@group(0) @binding(2) var<storage, read> G: array<f32>;              // [context, vocab, hidden] slot sums
@group(0) @binding(3) var<storage, read_write> grads: array<f32>;    // flat gradient (paramLayout)
