// Masked batch whitening in place, one workgroup (reference: whitenCpu in whiten.ts). Each thread
// sums a strided slice of rows in order; a fixed tree in workgroup memory combines the partials.

struct Whiten {
  numRows: u32,
}

@group(0) @binding(0) var<uniform> u: Whiten;
@group(0) @binding(1) var<storage, read> mask: array<f32>;        // [numRows] 0/1
@group(0) @binding(2) var<storage, read_write> adv: array<f32>;   // [numRows]

override workgroupSize: u32 = 256;

var<workgroup> red: array<f32, workgroupSize>;

fn reduceSum(lid: u32, x: f32) -> f32 {
  red[lid] = x;
  workgroupBarrier();
  for (var s = workgroupSize / 2u; s > 0u; s >>= 1u) {
    if (lid < s) {
      red[lid] += red[lid + s];
    }
    workgroupBarrier();
  }
  let total = red[0];
  workgroupBarrier();
  return total;
}

@compute @workgroup_size(workgroupSize)
fn main(@builtin(local_invocation_index) lid: u32) {
  var s = 0.0;
  var c = 0.0;
  for (var i = lid; i < u.numRows; i += workgroupSize) {
    if (mask[i] != 0.0) {
      s += adv[i];
      c += 1.0;
    }
  }
  let count = reduceSum(lid, c);
  let mean = reduceSum(lid, s) / max(count, 1.0);
  var ss = 0.0;
  for (var i = lid; i < u.numRows; i += workgroupSize) {
    if (mask[i] != 0.0) {
      let d = adv[i] - mean;
      ss += d * d;
    }
  }
  let total = reduceSum(lid, ss);
  var sd = 1.0;
  if (count > 1.0) {
    sd = sqrt(total / (count - 1.0) + 1e-8);
  }
  for (var i = lid; i < u.numRows; i += workgroupSize) {
    adv[i] = select(0.0, (adv[i] - mean) / sd, mask[i] != 0.0);
  }
}
