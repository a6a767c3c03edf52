#!/usr/bin/env bash
# The main job until the studio lands: installs what the CLI needs, builds `streetgan`, renders the
# demo street scenes (once) and trains a short run on them. Prints where the run was written.
# Run as root on Debian bookworm: bash packaging/run-demo.sh [extra streetgan train options]
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh --cli-only
cmake -S . -B build-cli -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTREETGAN_CLI_ONLY=ON
cmake --build build-cli -j2 --target streetgan
cli=build-cli/app/cli/streetgan
data=demo-data
if [ ! -d "$data/train_val" ]; then
  "$cli" demo-data --out "$data" --cities 2 --sequences 8 --frames 16
fi
run="runs/demo-$(date +%Y%m%d-%H%M%S)"
"$cli" train --dataroot "$data" --run-dir "$run" --preset naive-64 --epochs 3 \
  -t '{"batch_size":32}' -c '{"log_frequency":4}' "$@"
echo
echo "run written to: $(pwd)/$run"
echo "  sample grids: $(pwd)/$run/samples/"
echo "  events:       $(pwd)/$run/events.jsonl"
echo "  checkpoints:  $(pwd)/$run/checkpoints/"
