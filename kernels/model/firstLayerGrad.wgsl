// Embedding and first-layer gradients from the slot sums G, one thread per output of the adjacent
// emb | W1 | b1 range of the gradient (reference: firstLayerGradCpu in mlp.ts):
//   demb[t, d]      = sum_k sum_j W1[k * embed + d, j] G[k, t, j]   (k outer, j inner)
//   dW1[k * embed + d, j] = sum_t emb[t, d] G[k, t, j]               (t in order)
//   db1[j]          = sum_t G[0, t, j]                               (every row has one token in slot 0)
// G [context, vocab, hidden] is slotGrad.wgsl's output. Thread o writes grads[embOff + o]:
// o < vocab * embed is demb, then context * embed * hidden entries of dW1, then hidden of db1.
// V * K * D * H multiply-adds each for demb and dW1, whatever the row count.
// Uniform and bindings: firstLayerGradIo.wgsl; the W1 and b1 outputs: firstLayerGradTerms.wgsl.

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
fn main(
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
