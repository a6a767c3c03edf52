#!/usr/bin/env bash
# Installs every dependency (apt-get), configures, builds and runs every test through CTest.
# Run from anywhere as root on Debian bookworm: bash packaging/run-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash packaging/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTREETGAN_CLI_ONLY=OFF
cmake --build build -j2
cd build
ctest --output-on-failure -j2 --timeout 900
echo "test output (sample grids a person can look at): $(pwd)/tests/output"
