#!/usr/bin/env bash
# Renders resources/icons/org.streetgan.Studio.svg to the PNG sizes of the hicolor icon theme
# (resources/icons/hicolor/<N>x<N>/apps/). The PNGs are committed, so a build needs no SVG
# renderer; run this after changing the SVG (needs librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")/.."
svg=resources/icons/org.streetgan.Studio.svg
for size in 16 24 32 48 64 128 256; do
  out=resources/icons/hicolor/${size}x${size}/apps
  mkdir -p "$out"
  rsvg-convert --width "$size" --height "$size" "$svg" --output "$out/org.streetgan.Studio.png"
done
echo "rendered $svg at 16–256 px into resources/icons/hicolor/"
