#!/bin/bash
# Runs the Dawn benchmark (bench/dawn.ts) on a Linux machine with an NVIDIA GPU and nothing else
# installed, from a folder prepared on a machine with npm (how BENCHMARKS.md's H200 figures were
# made; `bash bench/gpuMachine/pack.sh [DIR]` makes it in one command). The folder ($D; default:
# the folder of this script when bench.mjs is beside it, else .scratch/dawnbench under the
# current directory) holds:
#   bench.mjs       node bench/gpuMachine/bundle.mjs $D/bench.mjs
#   bench-old.mjs   (AB mode only) bash bench/gpuMachine/bundleAt.sh REV $D/bench-old.mjs
#   node.gz         gzip -9 < "$(command -v node)"  (Node 20, x86-64; glibc >= 2.28)
#   webgpu/         index.js and package.json of `npm pack webgpu@0.6.2`, and
#   dawn.node.gz    its dist/linux-x64/dawn.node, gzipped
#   wasm/           node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm (the TF.js peer)
#   *.deb           libvulkan1 and the glvnd libraries the NVIDIA Vulkan driver needs (libglvnd0,
#                   libglx0, libegl1, libgl1, libgles2, libopengl0), from `apt-get download`;
#                   each is unpacked only where the system lacks it
# Results (JSON as `npm run bench` writes, and their tables) go to $OUT.
#   sections:  bash run.sh            iteration, then kernels (R = 9216, 73728 and 589824 rows)
#              PEER_ONLY=1 PB=16,128 bash run.sh    the TF.js peer at those batch sizes
#              CHECK_ONLY=1 bash run.sh             every kernel against its reference (the self-test)
#                                                   and the trainer on the GPU against the CPU backend
#              ROWS_AB=1 bash run.sh                the row kernels' layouts (kernels/selectors.ts:
#                                                   thread, subgroup, unrolled): checks with the
#                                                   subgroup variant, every layout timed side by side
#                                                   with the other kernels rewritten for GPUs
#                                                   (advantage with and without its group size
#                                                   compiled in, stats in four layouts, whiten,
#                                                   criticUpdate, gae, the optimizer step with each
#                                                   gradNorm block), whole iterations with each variant
#                                                   (ITER_S=0 skips those)
#              AB=kernels KSEL=gae,advantage bash run.sh   the commit before against this one,
#              AB=iteration bash run.sh             alternating ROUNDS times (default 2) on the same
#                                                   machine: bench-old.mjs (bundleAt.sh REV; OLD=
#                                                   names another file; OLD=ZI_LOOP this bundle
#                                                   with Dawn zeroing workgroup memory by a loop,
#                                                   OLD=ZI_NONE without zeroing it) against
#                                                   bench.mjs (old bundles get Dawn's timestamp
#                                                   quantization off, as bench.mjs has it). Machines
#                                                   and runs differ by a third or more in whole
#                                                   iterations and in the clock a short run gets, so
#                                                   only pairs from one run rank two versions
#                                                   (BENCHMARKS.md)
#              PENDING=1 bash run.sh                everything still to be timed on a GPU, in order
#                                                   of priority, within TOTAL_S seconds (default
#                                                   540, one device call): ROWS_AB's checks and
#                                                   rows; firstLayerGradSubgroup and the optimizer
#                                                   step against bench-old-7bc5c44.mjs (the norm's
#                                                   first pass folded in); the kernels with workgroup
#                                                   memory against OLD=ZI_LOOP; AB=kernels KSEL=logitGrad,stats against
#                                                   bench-old-7bc5c44.mjs; AB=kernels
#                                                   KSEL=gae,whiten,tokenBaseline,essScale against
#                                                   bench-old-57a41e7.mjs; the kernels with
#                                                   workgroup memory against OLD=ZI_NONE;
#                                                   AB=iteration against
#                                                   bench-old-7bc5c44.mjs; then ROWS_AB's whole
#                                                   iterations. A step that would start with under
#                                                   30 s left is skipped and says so
set -u
# The folder: $D, else the script's own folder when bench.mjs is beside it (a copy in the folder,
# run from anywhere), else .scratch/dawnbench under the current directory.
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${D:-}" ]; then [ -f "$HERE/bench.mjs" ] && D=$HERE || D=$(pwd)/.scratch/dawnbench; fi
OUT=${OUT:-/tmp/out}
mkdir -p /tmp/dn "$OUT" && gzip -dc $D/node.gz > /tmp/dn/node && chmod +x /tmp/dn/node
gzip -dc $D/dawn.node.gz > $D/webgpu/dist/linux-x64/dawn.node
for f in $D/*.deb; do p=$(basename $f); p=${p%%_*}; dpkg -s $p >/dev/null 2>&1 || ldconfig -p | grep -q "${p%[0-9]}" || { echo "unpacking $p"; dpkg -x $f /; }; done; ldconfig
# ICD=/path/to/icd.json picks another Vulkan driver (e.g. SwiftShader's, for a dry run without a GPU).
ICD=${ICD:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
[ -f $ICD ] || ICD=$(ls /usr/share/vulkan/icd.d/nvidia*.json /etc/vulkan/icd.d/nvidia*.json 2>/dev/null | head -1)
export VK_DRIVER_FILES=$ICD VK_ICD_FILENAMES=$ICD
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/nvidia/lib:${LD_LIBRARY_PATH:-}
echo "icd=$ICD"; nvidia-smi -L 2>/dev/null; /tmp/dn/node --version
cd $D
/tmp/dn/node -e "import('./webgpu/index.js').then(async (m) => { const a = await m.create([]).requestAdapter(); console.log('adapter', a && JSON.stringify({ vendor: a.info.vendor, description: a.info.description, fallback: a.info.isFallbackAdapter })); })" 2>&1 | tee $OUT/adapter.txt
if ! grep -q "adapter {" $OUT/adapter.txt; then
  VK_LOADER_DEBUG=error,warn,info /tmp/dn/node -e "import('./webgpu/index.js').then(async (m) => console.log(await m.create([]).requestAdapter()))" > $OUT/vkdebug.txt 2>&1
  tail -40 $OUT/vkdebug.txt; exit 3
fi
# The GPU's clocks while it runs (a GPU left idle between short passes stays at its idle clock).
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu --format=csv -lms 250 > $OUT/clocks.csv 2>&1 &
  trap "kill $! 2>/dev/null" EXIT
fi
run() { # name, seconds, flags...
  local name=$1 secs=$2; shift 2
  timeout $secs /tmp/dn/node bench.mjs "$@" --webgpu ./webgpu/index.js --wasm ./wasm --out $OUT/dawn-$name.json > $OUT/dawn-$name.md 2> $OUT/dawn-$name.log
  echo "$name rc=$?"; tail -3 $OUT/dawn-$name.log
}
if [ -n "${CHECK_ONLY:-}" ]; then run check ${CHECK_S:-200} --only selftest,parity; grep -v "^PASS" $OUT/dawn-check.log | tail -25; exit 0; fi
# The time a step may take: its own limit, or what is left before DEADLINE (PENDING mode).
DEADLINE=${DEADLINE:-0}
limit() { # seconds
  if [ "$DEADLINE" = 0 ]; then echo $1; return; fi
  local left=$(( DEADLINE - $(date +%s) - 5 ))
  [ $left -lt $1 ] && echo $left || echo $1
}
enough() { # name: false (and says so) when under 30 s are left
  if [ "$(limit 30)" -lt 30 ]; then echo "$1: skipped, $(( DEADLINE - $(date +%s) )) s left"; return 1; fi
}
rows_checks() {
  enough rows-checks || return 0
  run check-subgroup $(limit ${CHECK_S:-150}) --only selftest,parity --kernel-variant subgroup; grep -v "^PASS" $OUT/dawn-check-subgroup.log | tail -12
  enough rows-kernels || return 0
  run kernels-rows $(limit ${KERN_S:-150}) --only kernels --kernel-batches ${KB:-128,1024,1024x64} --kernels sample,sampleSubgroup,sampleUnrolled,tokenStats,tokenStatsSubgroup,tokenStatsUnrolled,logitGrad,logitGradSubgroup,firstLayerGrad,firstLayerGradSubgroup,gradNorm,gradNormBlock2048,adam,optimizerStep,optimizerStepBlock2048,finiteCheck,advantage,advantageFixedGroup,stats,statsSpreadBins,statsChunk512,statsHistCopies,whiten,criticUpdate,gae,tokenBaseline,essScale
}
rows_iterations() {
  [ "${ITER_S:-120}" = 0 ] && return 0
  for v in thread subgroup; do enough iteration-$v || return 0; run iteration-$v $(limit ${ITER_S:-120}) --only iteration --kernel-variant $v; done
}
# Dawn zeroing workgroup memory with a loop in the shader (Tint's) instead of Vulkan's
# VK_KHR_zero_initialize_workgroup_memory, Dawn's default where the driver has it (on SwiftShader
# the extension's zeroing made stats 2.5x slower and its compile 6x longer; BENCHMARKS.md).
ZI_LOOP_FLAGS="--dawn disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension"
# No zeroing at all (results wrong where a kernel relies on it; timings only): what zeroing costs in any form.
ZI_NONE_FLAGS="--dawn enable-dawn-features=allow_unsafe_apis,disable_workgroup_init"
# Bundles from before bench:dawn turned Dawn's timestamp quantization off (65,536 ns steps) get
# it off here, so both sides of a pair are timed alike.
OLD_TS_FLAGS="--dawn disable-dawn-features=timestamp_quantization"
ab() { # kernels|iteration, KSEL (kernels), old bundle (or ZI_LOOP / ZI_NONE: this one with those flags), tag for the files
  local kind=$1 ksel=$2 old=$3 tag=$4
  case $old in ZI_LOOP|ZI_NONE) ;; *) if [ ! -f "$old" ]; then echo "ab $tag: $old is missing (bundleAt.sh REV $old)"; return 0; fi ;; esac
  for i in $(seq ${ROUNDS:-2}); do for b in old new; do
    enough "ab $tag $b $i" || return 0
    f=bench.mjs; extra=""
    if [ $b = old ]; then case $old in ZI_LOOP) extra=$ZI_LOOP_FLAGS ;; ZI_NONE) extra=$ZI_NONE_FLAGS ;; *) f=$old; extra=$OLD_TS_FLAGS ;; esac; fi
    if [ "$kind" = iteration ]; then flags="--only iteration --kernel-variant ${VARIANT:-subgroup}"; rows='^\| (default|8x|64x|scale) \| gpu'
    else flags="--only kernels --kernel-batches ${KB:-128,1024,1024x64} ${ksel:+--kernels $ksel}"; rows='^\| [a-zA-Z0-9]+ \| ([NRP]=|K·V·H=)'; fi
    timeout $(limit ${AB_S:-120}) /tmp/dn/node $f $flags $extra --webgpu ./webgpu/index.js --wasm ./wasm --out $OUT/ab$tag-$b-$i.json > $OUT/ab$tag-$b-$i.md 2> $OUT/ab$tag-$b-$i.log
    echo "$tag $b $i rc=$?"; grep -E "$rows" $OUT/ab$tag-$b-$i.md | cut -d'|' -f2-9
  done; done
}
if [ -n "${PENDING:-}" ]; then
  DEADLINE=$(( $(date +%s) + ${TOTAL_S:-540} ))
  rows_checks
  # The hardware variant's configurations still untimed on a GPU (advantage's compiled-in group,
  # stats' histogram copies, OTB's two passes, essScale's loads), then whole iterations against an
  # older bundle.
  ab kernels advantage,advantageFixedGroup,stats,statsHistCopies,tokenBaseline,essScale ZI_LOOP -zero-init
  ab kernels gae,whiten,tokenBaseline,essScale bench-old-57a41e7.mjs -gae-whiten
  ab iteration "" bench-old-7bc5c44.mjs -iteration
  rows_iterations
  exit 0
fi
if [ -n "${ROWS_AB:-}" ]; then
  rows_checks
  rows_iterations
  exit 0
fi
if [ -n "${AB:-}" ]; then
  ab $AB "${KSEL:-}" ${OLD:-bench-old.mjs} ""
  exit 0
fi
if [ -n "${PEER_ONLY:-}" ]; then run peer ${PEER_S:-200} --only peer --peer-batches ${PB:-16,128}; exit 0; fi
[ "${ITER_S:-200}" != 0 ] && run iteration ${ITER_S:-200} --only iteration
run kernels ${KERN_S:-230} --only kernels --kernel-batches ${KB:-128,1024,1024x64} ${KSEL:+--kernels $KSEL}
# KSEL=sample,tokenStats a subset of the kernels; ITER_S=0 skips the iteration section
