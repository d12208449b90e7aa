// The uniform and bindings of sample.wgsl and sampleSubgroup.wgsl (a thread per row, or a subgroup per four rows).

struct Sample {
  numRows: u32,
  rowBase: u32,
  zBase: u32,
  vocab: u32,
  outStride: u32,
  outOffset: u32,
  seed: u32,
  iter: u32,
}

@group(0) @binding(0) var<uniform> u: Sample;
@group(0) @binding(1) var<storage, read> z: array<f32>;               // [rows, vocab] masked logits
@group(0) @binding(2) var<storage, read> rowPos: array<u32>;          // [rows] flat positions
@group(0) @binding(3) var<storage, read_write> seq: array<u32>;       // [N, seqLen] tokens
@group(0) @binding(4) var<storage, read_write> sampled: array<u32>;   // [rows, outStride] readback
