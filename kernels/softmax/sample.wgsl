// Inverse-CDF sampling from the softmax of each row of masked logits, one thread per row
// (reference: sampleCpu in sample.ts). u = hashUniform(seed, iter, rowPos, 0); the token is written
// into seq[rowPos] and into sampled[r * outStride + outOffset] for the readback.
// The uniform and bindings here are the other versions' too: their sources start with this file.
// A subgroup per four rows instead: sampleSubgroup.wgsl; the vocabulary compiled in: sampleUnrolled.wgsl.
// With sampler options (precision, topK, topP: a sampler that is not the trainer, sampler.ts) every
// version draws with sampleRowSampler below instead, the same code in each, so they agree bit for
// bit there; with the defaults that path is never taken and the draw is the one it always was.

@group(0) @binding(0) var<uniform> u: Sample;
@group(0) @binding(1) var<storage, read> z: array<f32>;               // [rows, vocab] masked logits
@group(0) @binding(2) var<storage, read> rowPos: array<u32>;          // [rows] flat positions
@group(0) @binding(3) var<storage, read_write> seq: array<u32>;       // [N, seqLen] tokens
@group(0) @binding(4) var<storage, read_write> sampled: array<u32>;   // [rows, outStride] readback

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn sampleRows(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let r = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (r >= u.numRows) {
    return;
  }
  if (samplerOn()) {
    sampleRowSampler(r);
    return;
  }
  let off = (u.zBase + r) * u.vocab;
  let ms = rowMaxSumExp(off, u.vocab);
  let m = ms.x;
  let s = ms.y;
  let ls = log(s); // lse = m + ls; probabilities are exp((z - m) - ls), see tokenStats.wgsl

  let pos = rowPos[u.rowBase + r];
  let x = hashUniform(u.seed, u.iter, pos, 0u);
  var cum = 0.0;
  var pick = -1;
  var last = 0u;
  for (var v = 0u; v < u.vocab; v++) {
    let zv = z[off + v];
    if (isMasked(zv)) {
      continue;
    }
    last = v;
    cum += exp((zv - m) - ls);
    if (x < cum) {
      pick = i32(v);
      break;
    }
  }
  // Rounding can leave the total just under x: take the last allowed token.
  let tok = select(last, u32(pick), pick >= 0);
  seq[pos] = tok;
  sampled[r * u.outStride + u.outOffset] = tok;
}

// Row r of the call drawn from the sampler's distribution (samplerDist.wgsl; reference: sampleCpu
// with sampler options): the same uniform and the same inverse CDF in index order, over the kept
// tokens with the kept sum as the normalizer.
fn sampleRowSampler(r: u32) {
  let off = (u.zBase + r) * u.vocab;
  let d = samplerRow(off, u.vocab);
  let pos = rowPos[u.rowBase + r];
  let x = hashUniform(u.seed, u.iter, pos, 0u);
  var cum = 0.0;
  var pick = -1;
  var last = 0u;
  for (var v = 0u; v < u.vocab; v++) {
    let zv = samplerLogit(off, v);
    if (!samplerKept(zv, d)) {
      continue;
    }
    last = v;
    cum += exp((zv - d.m) - d.ls);
    if (x < cum) {
      pick = i32(v);
      break;
    }
  }
  let tok = select(last, u32(pick), pick >= 0);
  seq[pos] = tok;
  sampled[r * u.outStride + u.outOffset] = tok;
}
