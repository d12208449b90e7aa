// OTB, pass 1 of 2 (reference: the W table of tokenBaselineCpu in tokenBaseline.ts; pass 2:
// tokenBaseline.wgsl), one thread per trajectory: its cumulative logit-gradient proxy at each of
// its positions (its masked rows, in order),
//   wpos[n tp + p] = W_{n,p} = sum_{q <= p} w_{n,q},   w = max(1 - 2 pi_old + sum pi_old^2, 0),
// and NO_POSITION at the positions past its last masked row. Pass 2 then reads a member's W at a
// position instead of walking the member's rows for every row of its group.

struct TokenBaseline {
  numRows: u32,
  tp: u32,
}

@group(0) @binding(0) var<uniform> u: TokenBaseline;
@group(0) @binding(1) var<storage, read> mask: array<f32>;            // [N * tp] 0/1
@group(0) @binding(2) var<storage, read> logpOld: array<f32>;         // [N * tp]
@group(0) @binding(3) var<storage, read> sumP2Old: array<f32>;        // [N * tp]
@group(0) @binding(4) var<storage, read_write> wpos: array<f32>;      // [N * tp] W by position

override workgroupSize: u32 = 64;

// W is a sum of terms >= 0 (or NaN): -1 is never one (NO_POSITION in tokenBaseline.ts).
const NO_POSITION: f32 = -1.0;

@compute @workgroup_size(workgroupSize)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) nwg: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
  let n = flatWorkgroup(wid, nwg) * workgroupSize + lid;
  if (n >= u.numRows / u.tp) {
    return;
  }
  let base = n * u.tp;
  var W = 0.0;
  var q = 0u;
  for (var k = 0u; k < u.tp; k++) {
    let r = base + k;
    if (mask[r] != 0.0) {
      W += gradProxy(logpOld[r], sumP2Old[r]);
      wpos[base + q] = W;
      q++;
    }
  }
  for (; q < u.tp; q++) {
    wpos[base + q] = NO_POSITION;
  }
}
