// firstLayerGrad.wgsl with one subgroup per embedding-gradient output, and the first pass of the
// gradient norm folded in (reference: firstLayerGradCpu in mlp.ts; the norm: gradNormCpu in
// adam.ts). Same outputs, grads[embOff + o] for o in emb | W1 | b1:
//   demb[t, d] = sum_k sum_j W1[k * embed + d, j] G[k, t, j]: only vocab * embed of them, each
//                K * H terms, so one thread each leaves the GPU empty behind a K * H step chain.
//                Here a subgroup's lanes take the terms i = k * hidden + j lane-strided (neighbouring
//                lanes read neighbouring words of W1's and G's rows), then subgroupAdd.
//   dW1, db1:    V terms each and K * embed * hidden + hidden of them: one thread per output, as
//                in firstLayerGrad.wgsl, in the workgroups after the demb ones.
// Workgroup w < embGroups takes demb outputs w * EMB_PER_GROUP, ... (EMB_PER_GROUP is put in front
// by the host); subgroup s of it takes outputs s, s + num_subgroups, ... of those, by the
// subgroup_id builtin and with lanes by rank among the active ones (rowSubgroup.wgsl says why).
//
// The gradient norm's block sums: every workgroup writes partials[w], the sum of the squares of
// the outputs it wrote; the workgroups after the dW1 | db1 ones add up the W2 | b2 range instead
// (headGrad's, written before this dispatch), headBlock entries each. adamMerged.wgsl then adds
// the partials in order, so the optimizer step needs no pass over the gradient of its own. Why:
// that pass was a dependent dispatch of its own (~2-5 us on the H200 whatever its size) to read
// back values this kernel has in registers. The order of every sum is fixed by the sizes, the
// constants and which workgroup computes what (a demb square goes to its output's slot, not its
// lane's), so the norm is the same bits on every run.

// Uniform and bindings 0-3: firstLayerGradIo.wgsl; the W1 and b1 outputs: firstLayerGradTerms.wgsl;
// subgroupLanes: subgroupLanes.wgsl; treeSum: gradNormTree.wgsl.
@group(0) @binding(4) var<storage, read_write> partials: array<f32>;   // [workgroups] sums of squares

override workgroupSize: u32 = 64;

// The squares of this workgroup's demb outputs, by output.
var<workgroup> embSquares: array<f32, EMB_PER_GROUP>;

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

// This thread's share of the squares of W2 | b2 block b: entries lid, lid + workgroupSize, ... of
// the block, four loads issued together (gradNorm.wgsl does the same over the whole gradient).
fn headSquares(b: u32, lid: u32) -> f32 {
  let start = min(b * u.headBlock, u.headLen);
  let end = min(start + u.headBlock, u.headLen);
  var acc = 0.0;
  var i = start + lid;
  for (; i + 3u * workgroupSize < end; i += 4u * workgroupSize) {
    let a = grads[u.headOff + i];
    let c = grads[u.headOff + i + workgroupSize];
    let e = grads[u.headOff + i + 2u * workgroupSize];
    let f = grads[u.headOff + i + 3u * workgroupSize];
    acc += a * a;
    acc += c * c;
    acc += e * e;
    acc += f * f;
  }
  for (; i < end; i += workgroupSize) {
    let g = grads[u.headOff + i];
    acc += g * g;
  }
  return acc;
}

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
  @builtin(subgroup_id) sid: u32,
  @builtin(num_subgroups) numSubgroups: u32,
) {
  let w = flatWorkgroup(wid, nwg);
  let nEmb = u.vocab * u.embed;
  let embGroups = (nEmb + EMB_PER_GROUP - 1u) / EMB_PER_GROUP;
  let weightGroups = (u.context * u.embed * u.hidden + u.hidden + workgroupSize - 1u) / workgroupSize;
  let groups = embGroups + weightGroups + (u.headLen + u.headBlock - 1u) / u.headBlock;
  var sq = 0.0;
  // w is the same for the whole workgroup, so each branch is taken by all of its threads.
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
        embSquares[e] = g * g;
      }
    }
  } else if (w < embGroups + weightGroups) {
    let g = writeWeightGrad(nEmb + (w - embGroups) * workgroupSize + lid);
    sq = g * g;
  } else {
    sq = headSquares(w - embGroups - weightGroups, lid);
  }
  workgroupBarrier();
  if (w < embGroups && lid == 0u) {
    for (var e = 0u; e < EMB_PER_GROUP && w * EMB_PER_GROUP + e < nEmb; e++) {
      sq += embSquares[e];
    }
  }
  let total = treeSum(lid, sq);
  // Workgroups past the last (2-D grid padding) write nothing.
  if (lid == 0u && w < groups) {
    partials[w] = total;
  }
}
