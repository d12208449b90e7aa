// The update's finite checks, one dispatch (reference: updateHealthCpu in finiteCheck.ts). Thread i
// takes one item of three ranges laid end to end and ORs a bit into health[0] when a value is NaN
// or +-Inf:
//   i < rows                          logp[i]                                        lossBit
//   rows <= i < 2 rows                ppo row r = i - rows: its loss and ratio words  lossBit
//                                     (words r * rowWords and r * rowWords + 1)
//   2 rows <= i < 2 rows + params     params[i - 2 rows]                             paramBit
// Other words of a ppo row are not values (the clip flag is an i32, and -1 has the bits of a NaN).
// Why one dispatch: the four checks it replaces (2026-12-01) each ORed into the same word, so the
// GPU ran them one after another, each at the cost of a dispatch (~2 us on the H200) for a few
// KB to a few hundred KB of reads.
// The test is on the bits (exponent all ones): compilers may assume floats are finite and fold
// `x != x` away, and WGSL has no isNan. atomicOr is order-independent, so the result is deterministic.

@group(0) @binding(0) var<uniform> u: FiniteCheck;
@group(0) @binding(1) var<storage, read> logp: array<u32>;             // [rows] f32 bits
@group(0) @binding(2) var<storage, read> ppo: array<u32>;              // [rows * rowWords] PpoRow words
@group(0) @binding(3) var<storage, read> params: array<u32>;           // [params] f32 bits
@group(0) @binding(4) var<storage, read_write> health: array<atomic<u32>>; // [1] bit flags

override workgroupSize: u32 = 256;

fn nonFinite(bits: u32) -> bool {
  return (bits & 0x7f800000u) == 0x7f800000u;
}

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let i = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (i < u.rows) {
    if (nonFinite(logp[i])) {
      atomicOr(&health[0], u.lossBit);
    }
  } else if (i < 2u * u.rows) {
    let w = (i - u.rows) * u.rowWords;
    if (nonFinite(ppo[w]) || nonFinite(ppo[w + 1u])) {
      atomicOr(&health[0], u.lossBit);
    }
  } else if (i < 2u * u.rows + u.params) {
    if (nonFinite(params[i - 2u * u.rows])) {
      atomicOr(&health[0], u.paramBit);
    }
  }
}
