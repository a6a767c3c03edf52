#!/bin/bash
# The README's first image, redone: the studio as a user sees it, installed under a home folder of
# its own, after SECONDS (default 300) of its demo run on this machine: charts moving, the sample
# grid learning roads and facades. Writes docs/images/studio-demo.png.
#
#   tools/readme_screenshot.sh BUILD_DIR [SECONDS]
#
# Needs a built tree (cmake --build BUILD_DIR). Runs the real studio offscreen; the demo trains
# on the CPU, so the picture shows what SECONDS buy on this machine (the README says which).
set -euo pipefail
if [ $# -lt 1 ] || [ ! -f "$1/CMakeCache.txt" ]; then
  echo "usage: tools/readme_screenshot.sh BUILD_DIR [SECONDS]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=${2:-300}
repo=$(cd "$(dirname "$0")/.." && pwd)
out="$repo/docs/images/studio-demo.png"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# A home of its own: the studio's settings, its demo data and runs, and the programs as installed.
export HOME="$stage/researcher"
mkdir -p "$HOME"
cmake --install "$build" --prefix "$HOME/.local" >/dev/null
export QT_QPA_PLATFORM=offscreen
"$HOME/.local/bin/streetgan-studio" --demo --size 1280x800 --after "$seconds" --screenshot "$stage/shot.png"
mv "$stage/shot.png" "$out"
echo "wrote $out after $seconds s of the demo"
