// The uniform and bindings of tokenStats.wgsl and tokenStatsSubgroup.wgsl (a thread per row, or a subgroup per four rows).

struct TokenStats {
  numRows: u32,
  rowBase: u32,
  vocab: u32,
}

@group(0) @binding(0) var<uniform> u: TokenStats;
@group(0) @binding(1) var<storage, read> z: array<f32>;                // [rows, vocab] masked logits
@group(0) @binding(2) var<storage, read> seq: array<u32>;              // [N, seqLen] tokens
@group(0) @binding(3) var<storage, read> rowPos: array<u32>;           // [rows] flat positions
@group(0) @binding(4) var<storage, read_write> logp: array<f32>;       // [rows]
@group(0) @binding(5) var<storage, read_write> entropy: array<f32>;    // [rows] nats
@group(0) @binding(6) var<storage, read_write> sumP2: array<f32>;      // [rows]
