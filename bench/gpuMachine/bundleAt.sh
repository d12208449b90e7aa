#!/bin/bash
# Bundles the benchmark as it was at a git revision, for run.sh's A/B mode:
#   bash bench/gpuMachine/bundleAt.sh REV .scratch/dawnbench/bench-old.mjs
# (a temporary worktree of REV sharing this checkout's node_modules).
set -eu
REV=$1
OUT=$(realpath -m "$2")
ROOT=$(git rev-parse --show-toplevel)
WT=$(mktemp -d)
git -C "$ROOT" worktree add --detach -q "$WT" "$REV"
trap 'git -C "$ROOT" worktree remove --force "$WT"' EXIT
ln -s "$ROOT/node_modules" "$WT/node_modules"
(cd "$WT" && node bench/gpuMachine/bundle.mjs "$OUT")
echo "bundled $(git -C "$ROOT" rev-parse --short "$REV") into $OUT"
