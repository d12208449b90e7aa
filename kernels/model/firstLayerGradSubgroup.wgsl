// firstLayerGrad.wgsl with one subgroup per embedding-gradient output (reference:
// firstLayerGradCpu in mlp.ts). Same outputs, grads[embOff + o] for o in emb | W1 | b1:
//   demb[t, d] = sum_k sum_j W1[k * embed + d, j] G[k, t, j]: only vocab * embed of them, each
//                K * H terms, so one thread each leaves the GPU empty behind a K * H step chain.
//                Here a subgroup's lanes take the terms i = k * hidden + j lane-strided (neighbouring
//                lanes read neighbouring words of W1's and G's rows), then subgroupAdd.
//   dW1, db1:    V terms each and K * embed * hidden + hidden of them: one thread per output, as
//                in firstLayerGrad.wgsl, in the workgroups after the demb ones.
// Workgroup w < embGroups takes demb outputs w * EMB_PER_GROUP, ... (EMB_PER_GROUP is appended
// by the host); subgroup s of it takes outputs s, s + num_subgroups, ... of those, by the
// subgroup_id builtin and with lanes by rank among the active ones (rowSubgroup.wgsl says why).

// Joined after firstLayerGrad.wgsl (the uniform, the bindings, the W1 and b1 outputs) and before
// subgroupLanes.wgsl.

// demb[t, d] summed over the subgroup: each lane a strided share of the K * H terms, then a tree.
fn embGradSubgroup(t: u32, d: u32, lanes: vec2u) -> f32 {
  var acc = 0.0;
  for (var i = lanes.x; i < u.context * u.hidden; i += lanes.y) {
    let k = i / u.hidden;
    let j = i - k * u.hidden;
    acc += params[u.w1Off + (k * u.embed + d) * u.hidden + j] * G[(k * u.vocab + t) * u.hidden + j];
  }
  return subgroupAdd(acc);
}

@compute @workgroup_size(workgroupSize)
fn firstLayerGradSubgroup(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
  @builtin(subgroup_id) sid: u32,
  @builtin(num_subgroups) numSubgroups: u32,
) {
  let w = flatWorkgroup(wid, nwg);
  let nEmb = u.vocab * u.embed;
  let embGroups = (nEmb + EMB_PER_GROUP - 1u) / EMB_PER_GROUP;
  // w is the same for the whole workgroup, so every subgroup takes this branch with all its lanes.
  if (w < embGroups) {
    let lanes = subgroupLanes();
    for (var e = sid; e < EMB_PER_GROUP; e += numSubgroups) {
      let o = w * EMB_PER_GROUP + e;
      if (o >= nEmb) {
        break;
      }
      let g = embGradSubgroup(o / u.embed, o % u.embed, lanes);
      if (subgroupElect()) {
        grads[u.embOff + o] = g;
      }
    }
    return;
  }
  writeWeightGrad(nEmb + (w - embGroups) * workgroupSize + lid);
}
