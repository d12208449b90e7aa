// The bandwidth ceiling of the kernel benchmark: a plain copy, one vec4<f32> per thread
// (bench/page/kernels.ts times it at the same byte counts as each kernel).

@group(0) @binding(0) var<uniform> u: Copy;
@group(0) @binding(1) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec4<f32>>;

override workgroupSize: u32 = 256;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i < u.n4) {
    dst[i] = src[i];
  }
}
