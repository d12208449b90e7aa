// (rank of this invocation among its subgroup's active lanes, number of active lanes): the
// subgroup kernels stride by these rather than by subgroup_invocation_id and subgroup_size, since
// WebGPU does not promise that a subgroup is full. Joined after a subgroup kernel's own source.
fn subgroupLanes() -> vec2u {
  return vec2u(subgroupExclusiveAdd(1u), subgroupAdd(1u));
}
