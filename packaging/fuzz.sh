#!/usr/bin/env bash
# Builds the libFuzzer harnesses of fuzz/ (clang-14, ASan + UBSan) and runs each for SECONDS
# (default 60) on a copy of its committed seed corpus. A crash leaves its input in
# build-fuzz/crashes/<target>/ and fails the script; new inputs stay in build-fuzz/corpus/.
#   bash packaging/fuzz.sh [SECONDS] [TARGET...]
#   STREETGAN_FUZZ_RUNS=N  run N inputs of each from seed 1 instead, from the committed seeds
#                          only (what .ci/run does: the same inputs on every run, so a CI result
#                          never depends on the machine's speed)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
case "$seconds" in ''|*[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$seconds'" >&2; exit 2 ;; esac

if ! command -v clang++-14 >/dev/null || ! compgen -G '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null; then
  bash packaging/apt-install.sh clang-14 libfuzzer-14-dev >/dev/null
fi
bash packaging/install-deps.sh --cli-only >/dev/null

CXX=clang++-14 cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j2

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for harness in fuzz/fuzz_*.cpp; do targets+=("$(basename "$harness" .cpp)"); done
fi

# One harness per core at a time (each is single-threaded); counted before OMP_NUM_THREADS is
# set, which nproc obeys.
jobs=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)
# LibTorch's own threads are not what is fuzzed; one keeps the runs reproducible.
export OMP_NUM_THREADS=1
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1
export LSAN_OPTIONS=suppressions=$PWD/fuzz/lsan.supp
# One row of the table.
row() { printf '%-24s %10s %8s %8s %s\n' "$@"; }
# Runs one harness; its row of the table goes to build-fuzz/<target>.row.
run_target() {
  local target=$1 work=build-fuzz/corpus/$1 crashes=build-fuzz/crashes/$1 log=build-fuzz/$1.log limit result=ok
  mkdir -p "$work" "$crashes"
  if [ -n "${STREETGAN_FUZZ_RUNS:-}" ]; then
    rm -rf "$work" && mkdir -p "$work"
    limit=(-runs="$STREETGAN_FUZZ_RUNS" -seed=1)
  else
    limit=(-max_total_time="$seconds")
  fi
  [ -d "fuzz/corpus/$target" ] && cp -n fuzz/corpus/"$target"/* "$work"/ 2>/dev/null || true
  build-fuzz/"$target" "$work" "${limit[@]}" -rss_limit_mb=4096 -timeout=25 \
    -max_len=1048576 -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 ||
    result="FOUND: see $log and $crashes"
  local runs cov ft
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
  row "$target" "$runs" "$cov" "$ft" "$result" >"build-fuzz/$target.row"
}
for target in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  rm -f "build-fuzz/$target.row"
  run_target "$target" &
done
wait || true
# The table, in the harnesses' order, whichever ended first.
failed=()
row target executions cov ft result
for target in "${targets[@]}"; do
  if [ -f "build-fuzz/$target.row" ]; then
    cat "build-fuzz/$target.row"
  else
    row "$target" '?' '?' '?' "FOUND: it ended without its result; see build-fuzz/$target.log"
  fi
  grep -q ' ok$' "build-fuzz/$target.row" 2>/dev/null || failed+=("$target")
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz.sh: ${#failed[@]} target(s) found a crash, a leak or a timeout: ${failed[*]}" >&2
  exit 1
fi
