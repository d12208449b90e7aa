// The uniform of the critic update's two passes (criticUpdate.wgsl, criticApply.wgsl; host side:
// CRITIC_UPDATE_UNIFORM in critic.ts), joined after each one's own source.

struct CriticUpdate {
  tableSize: u32,
  numRows: u32,
  rowsPerChunk: u32,
  chunks: u32,
  lr: f32,
}

@group(0) @binding(0) var<uniform> u: CriticUpdate;
