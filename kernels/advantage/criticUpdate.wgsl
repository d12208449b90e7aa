// The tabular critic's update (reference: criticUpdateCpu in critic.ts), pass 1 of 2: per chunk c
// of rows, the sum of the returns and the count of the masked rows whose state is entry k,
//   partials[c, k] = (sum ret[r], count)   over r in chunk c with mask[r] != 0 and stateKey[r] = k.
// One workgroup per chunk: its invocations zero the chunk's private table together, then
// invocation 0 walks the chunk's rows in order. No two chunks share a word (no atomics) and each
// sum has a fixed order, so the result is the same bits on every run. Work numRows plus the
// zeroing of chunks * tableSize entries, where scanning every row per entry was tableSize * numRows.
// Chunk c holds rows c * rowsPerChunk onwards (at most rowsPerChunk, never past numRows).
// criticApply.wgsl then adds the chunks in order and moves the table. Uniform: criticUniform.wgsl.
//
// Layout [chunks, tableSize], chunk-major: the zeroing here (neighbouring invocations, neighbouring
// entries of one table) and pass 2's reads (a thread per entry) are both coalesced; the scatter
// goes where the states say in either layout. Entry-major would only help a one-invocation zeroing.

@group(0) @binding(1) var<storage, read> stateKey: array<u32>;           // [numRows]
@group(0) @binding(2) var<storage, read> mask: array<f32>;               // [numRows]
@group(0) @binding(3) var<storage, read> ret: array<f32>;                // [numRows]
@group(0) @binding(4) var<storage, read_write> partials: array<vec2f>;   // [chunks, tableSize] (sum, count)

override workgroupSize: u32 = 64;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let c = flatWorkgroup(wid, nwg);
  if (c >= u.chunks) {
    return;
  }
  let table = c * u.tableSize;
  // The scratch holds anything (another run's chunks, another kernel's data): clear it.
  for (var k = lid; k < u.tableSize; k += workgroupSize) {
    partials[table + k] = vec2f(0.0);
  }
  storageBarrier();
  if (lid != 0u) {
    return;
  }
  let r0 = c * u.rowsPerChunk;
  let r1 = min(r0 + u.rowsPerChunk, u.numRows);
  for (var r = r0; r < r1; r++) {
    let k = stateKey[r];
    // A key outside the table would land in the next chunk's: skipped, as no entry matches it.
    if (mask[r] != 0.0 && k < u.tableSize) {
      partials[table + k] += vec2f(ret[r], 1.0);
    }
  }
}
