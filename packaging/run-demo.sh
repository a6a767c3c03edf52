#!/usr/bin/env bash
# The main job: installs everything, builds, and opens StreetGAN Studio on the demo street scenes
# (rendered on first use) or on the data set given:
#   bash packaging/run-demo.sh [DATASET_FOLDER]
# Without a display (no DISPLAY or WAYLAND_DISPLAY) it runs the same demo headless instead: the
# demo scenes, a short training run with the CLI, and where its run directory is.
# Run as root on Debian bookworm.
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTREETGAN_CLI_ONLY=OFF
cmake --build build -j2 --target streetgan streetgan-studio
cli=build/app/cli/streetgan
studio=build/app/studio/streetgan-studio

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  export STREETGAN_CLI="$(pwd)/$cli"
  if [ $# -ge 1 ]; then
    exec "$studio" --dataroot "$1"
  fi
  exec "$studio" --demo
fi

echo "run-demo.sh: no display (DISPLAY and WAYLAND_DISPLAY are unset); running the demo headless" >&2
data=${1:-demo-data-1000}
if [ ! -d "$data" ]; then
  "$cli" demo-data --out "$data" --cities 4 --sequences 10 --frames 25
fi
run="runs/demo-$(date +%Y%m%d-%H%M%S)"
"$cli" train --dataroot "$data" --run-dir "$run" --preset demo --epochs 5
echo
echo "run written to: $(pwd)/$run"
echo "  sample grids: $(pwd)/$run/samples/"
echo "  events:       $(pwd)/$run/events.jsonl"
echo "  checkpoints:  $(pwd)/$run/checkpoints/"
