#!/usr/bin/env bash
# Installs every dependency (apt-get), configures, builds and runs every test through CTest.
# Run from anywhere as root on Debian bookworm: bash packaging/run-tests.sh
# At the end it prints what each phase took (wall seconds, and the CPU seconds of the build) and
# the ten slowest suites: the figures docs/building.md tracks.
set -euo pipefail
cd "$(dirname "$0")/.."

phase_wall=0 phase_cpu=0 cpu=0
times_file="$(mktemp)"
trap 'rm -f "$times_file"' EXIT
cpu_now() {  # cpu: user + system CPU seconds of every finished child of this shell (`times`, here, not in a subshell)
  times >"$times_file"
  cpu="$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d\n", t }' "$times_file")"
}
phase_start() { phase_wall=$SECONDS; cpu_now; phase_cpu=$cpu; }
phase_end() { cpu_now; printf -v "$1" '%d s' "$((SECONDS - phase_wall))"; printf -v "$1_cpu" '%d s' "$((cpu - phase_cpu))"; }

phase_start
bash packaging/install-deps.sh
phase_end apt
phase_start
# Optimised as a release is, with line tables (-g1) in place of full debug information: a
# backtrace still names every file and line, and LibTorch's code compiles and links in two thirds
# of the time (docs/building.md). Build by hand for full debug information.
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DSTREETGAN_CLI_ONLY=OFF
phase_end configure
phase_start
cmake --build build -j2
phase_end build
cd build
phase_start
status=0
ctest --output-on-failure -j2 --timeout 900 || status=$?
phase_end tests
echo "test output (sample grids a person can look at): $(pwd)/tests/output"
echo "run-tests: apt ${apt}, configure ${configure}, build ${build} (CPU ${build_cpu}), tests ${tests} (ctest -j2)"
# This run's time of each suite, from CTest's log of it ("N/M Testing: NAME", then "Test time = S sec").
if [ -f Testing/Temporary/LastTest.log ]; then
  echo "run-tests: the ten slowest suites (seconds):"
  awk '/^[0-9]+\/[0-9]+ Testing: / { name = $3 } /^Test time = / && name != "" { printf "  %8.1f  %s\n", $4, name; name = "" }' \
    Testing/Temporary/LastTest.log | sort -rn | head -n 10
fi
exit "$status"
