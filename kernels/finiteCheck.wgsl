// Sets `bit` in health[0] if any of data[i * stride + offset], i < n, is NaN or +-Inf (a column of
// a row-structured buffer, or all of a flat one with stride 1) (reference: nonFiniteCpu in
// finiteCheck.ts). The test is on the bits (exponent all ones): compilers may assume floats are
// finite and fold `x != x` away, and WGSL has no isNan. atomicOr is order-independent, so the
// result is deterministic.

struct FiniteCheck {
  n: u32,
  bit: u32,
  stride: u32,
  offset: u32,
}

@group(0) @binding(0) var<uniform> u: FiniteCheck;
@group(0) @binding(1) var<storage, read> data: array<u32>;              // [n * stride] f32 values, read as bits
@group(0) @binding(2) var<storage, read_write> health: array<atomic<u32>>; // [1] bit flags

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i >= u.n) {
    return;
  }
  if ((data[i * u.stride + u.offset] & 0x7f800000u) == 0x7f800000u) {
    atomicOr(&health[0], u.bit);
  }
}
