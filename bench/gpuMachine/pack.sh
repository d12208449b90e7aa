#!/bin/bash
# Makes the folder run.sh needs on a GPU machine with nothing installed (run.sh's header lists its
# parts), in one command, on a machine with npm, apt and the registry:
#   bash bench/gpuMachine/pack.sh [DIR]        DIR defaults to .scratch/dawnbench
# Then carry DIR to the GPU machine and run `PENDING=1 bash DIR/run.sh` there (BENCHMARKS.md).
# Old bundles for run.sh's pairs (OLD_REVS, default the two PENDING uses) are made from this
# checkout's history. The folder must stay under the device tool's 64 MiB; this prints its size.
set -eu
ROOT=$(git rev-parse --show-toplevel)
D=$(realpath -m "${1:-$ROOT/.scratch/dawnbench}")
WEBGPU_VERSION=${WEBGPU_VERSION:-0.6.2}
OLD_REVS=${OLD_REVS:-7bc5c44 57a41e7}
mkdir -p "$D/webgpu/dist/linux-x64" "$D/wasm"
cd "$ROOT"
node bench/gpuMachine/bundle.mjs "$D/bench.mjs"
cp bench/gpuMachine/run.sh "$D/"
for rev in $OLD_REVS; do
  [ -f "$D/bench-old-$rev.mjs" ] || bash bench/gpuMachine/bundleAt.sh "$rev" "$D/bench-old-$rev.mjs"
done
gzip -9 -c "$(command -v node)" > "$D/node.gz"
cp node_modules/@tensorflow/tfjs-backend-wasm/dist/*.wasm "$D/wasm/"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
(cd "$TMP" && npm pack -q "webgpu@$WEBGPU_VERSION" > /dev/null && tar xzf webgpu-*.tgz)
cp "$TMP/package/index.js" "$TMP/package/package.json" "$D/webgpu/"
gzip -9 -c "$TMP/package/dist/linux-x64/dawn.node" > "$D/dawn.node.gz"
# run.sh unpacks dawn.node here; a copy left by a dry run would travel 21 MB for nothing.
rm -f "$D/webgpu/dist/linux-x64/dawn.node"
(cd "$D" && apt-get download -q libvulkan1 libglvnd0 libglx0 libegl1 libgl1 libgles2 libopengl0 > /dev/null)
du -sh "$D"
echo "dry run without a GPU: ICD=/usr/lib/chromium/vk_swiftshader_icd.json OUT=/tmp/dry PENDING=1 TOTAL_S=200 KB=128 ROUNDS=1 bash $D/run.sh"
