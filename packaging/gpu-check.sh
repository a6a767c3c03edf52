#!/usr/bin/env bash
# One command that proves a GPU host: builds the streetgan CLI and the engine's test suites against
# the host's CUDA LibTorch, runs the suites that read STREETGAN_TEST_DEVICE on the GPU, trains on it,
# checks what a researcher meets there (device choice, mixed precision, CUDA graphs, the GPU figures
# of the `system` event), and times the training step beside PyTorch on the same GPU.
# Everything goes under one output folder; the exit status is non-zero when any step failed.
#
#   bash packaging/gpu-check.sh [--out DIR] [--torch DIR] [--deps FILE] [--jobs N] [--quick]
#
#   --out DIR    where the logs, the run and summary.md go (default gpu-check-out)
#   --torch DIR  LibTorch's CMake prefix (a folder holding share/cmake/Torch or lib/cmake/Torch);
#                default: the installed PyTorch's (python3 -c 'import torch;
#                print(torch.utils.cmake_prefix_path)'), else Debian trixie's libtorch-cuda-dev
#   --deps FILE  OpenCV, FFmpeg and Qt 6 for a host without Debian's: the bundle packaging/gpu-deps.sh
#                makes on a Debian bookworm machine (headers, libraries, stubs of what they pull
#                in); without it the host's own packages are used
#   --jobs N     parallel compile jobs (default: all cores)
#   --quick      the benchmark on fewer configurations (what fits a 15-minute GPU lease)
#   --no-bench   build and check only
#   --no-suites  build the CLI alone and run no test suite (a host without Qt 6 and no --deps)
#   --dry-run    say which GPU, LibTorch and bundle it found and what it would run; build nothing
#
# Needs: an NVIDIA driver (nvidia-smi), CUDA's nvcc (LibTorch's CMake files look for it), CMake
# 3.24+, Ninja, g++ 10+, pkg-config and nlohmann-json, Qt 6 Core, Gui and Test (or --deps) for
# the suites, and python3 with torch for the PyTorch side of the benchmark. Docs: docs/gpu.md.
set -uo pipefail

source_dir="$(cd "$(dirname "$0")/.." && pwd)"
out="gpu-check-out"; torch_prefix=""; deps=""; jobs="$(nproc)"; quick=0; bench=1; suites=1; dry_run=0
# value OPTION PLACEHOLDER "$@": the option's value, or a usage error as the CLI words it.
value() {
  if [ $# -lt 3 ] || [ -z "$3" ]; then echo "gpu-check: option '$1' needs a value ($1 $2), not an empty one" >&2; exit 2; fi
  printf '%s' "$3"
}
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$(value --out DIR "${@:2}")" || exit 2; shift 2 ;;
    --torch) torch_prefix="$(value --torch DIR "${@:2}")" || exit 2; shift 2 ;;
    --deps) deps="$(value --deps FILE "${@:2}")" || exit 2; shift 2 ;;
    --jobs) jobs="$(value --jobs N "${@:2}")" || exit 2; shift 2 ;;
    --quick) quick=1; shift ;;
    --no-bench) bench=0; shift ;;
    --no-suites) suites=0; shift ;;
    --dry-run) dry_run=1; shift ;;
    -h | --help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$jobs" =~ ^[1-9][0-9]{0,3}$ ]] && [ "$jobs" -le 1024 ] ||
  { echo "gpu-check: --jobs must be a number from 1 to 1024, not '$jobs'" >&2; exit 2; }
# No GPU, nothing written: checked before the output folder is made.
gpus=0
command -v nvidia-smi >/dev/null && gpus="$(timeout 60 nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
if [ "${gpus:-0}" -lt 1 ]; then
  echo "gpu-check: no NVIDIA GPU is visible (nvidia-smi is missing or lists none); this script proves a GPU host" >&2
  exit 3
fi
# A relative --out is taken as a path ("-" and CDPATH mean nothing special here).
case "$out" in /*) ;; *) out="./$out" ;; esac
made_out=0; [ -e "$out" ] || [ -L "$out" ] || made_out=1
mkdir -p -- "$out" 2>/dev/null && [ -d "$out" ] && [ -w "$out" ] ||
  { echo "gpu-check: --out: cannot write to the folder '$out'" >&2; exit 2; }
out="$(CDPATH='' cd -- "$out" && pwd -P)"
work="$out/work"
made_work=0; [ -e "$work" ] || [ -L "$work" ] || made_work=1
# Until the checks start (after the host is found usable and --dry-run has answered), the log and
# the summary are kept aside: a dry run or a refusal leaves --out as it found it (an earlier
# check's results included), removing only what it made.
log="$(mktemp)" && summary="$(mktemp)" || { echo "gpu-check: cannot make temporary files (TMPDIR?)" >&2; exit 2; }
committed=0
discard() {
  [ "$committed" -eq 1 ] && return
  rm -f -- "$log" "$summary"
  [ "$made_work" -eq 1 ] && rm -rf -- "$work"
  [ "$made_out" -eq 1 ] && rmdir -- "$out" 2>/dev/null
}
trap discard EXIT
mkdir -p -- "$work" 2>/dev/null || { echo "gpu-check: --out: cannot make $work in it" >&2; exit 2; }
failures=0
start_all=$(date +%s)

say() { echo "gpu-check: $*" | tee -a "$log" >&2; }
note() { echo "$*" >> "$summary"; }
# step NAME COMMAND...: runs it with its output in the log, records pass/fail and seconds.
step() {
  local name="$1"; shift
  local t0=$(date +%s) rc
  say "== $name"
  "$@" >> "$log" 2>&1; rc=$?
  local secs=$(( $(date +%s) - t0 ))
  if [ $rc -eq 0 ]; then note "| $name | passed | ${secs} s |"
  else note "| $name | FAILED (exit $rc) | ${secs} s |"; failures=$((failures + 1)); say "$name failed (exit $rc); see $log"; fi
  return $rc
}

# --- the host ---------------------------------------------------------------------------------
# LibTorch: --torch, else the installed PyTorch's, else Debian's; the first that has CMake files,
# and it must be a CUDA build (libtorch_cuda.so beside its libraries).
# The TorchConfig.cmake under a prefix (5 levels: Debian's is lib/x86_64-linux-gnu/cmake/Torch/),
# the shallowest first, as CMake's search would find it.
torch_config_of() {
  [ -n "$1" ] && [ -d "$1" ] || return 0
  find "$1" -maxdepth 5 -type f -name TorchConfig.cmake -printf '%d %p\n' 2>/dev/null | sort -n | head -n 1 | cut -d' ' -f2-
}
if [ -n "$torch_prefix" ]; then
  torch_from="--torch"
  torch_config="$(torch_config_of "$torch_prefix")"
  [ -n "$torch_config" ] || { say "--torch: no LibTorch CMake files (TorchConfig.cmake) under '$torch_prefix'"; exit 2; }
else
  candidate=""
  command -v python3 >/dev/null &&
    candidate="$(timeout 120 python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)"
  torch_config="$(torch_config_of "$candidate")"
  if [ -n "$torch_config" ]; then torch_prefix="$candidate"; torch_from="the installed PyTorch"
  else
    torch_config="$(torch_config_of /usr/lib/x86_64-linux-gnu/cmake/Torch)"
    [ -n "$torch_config" ] || {
      say "no LibTorch found: give --torch DIR (a folder holding share/cmake/Torch), or install PyTorch or Debian's libtorch-cuda-dev"
      exit 2
    }
    torch_prefix=/usr; torch_from="Debian's libtorch"
  fi
fi
# A CUDA build has libtorch_cuda.so, a file, beside libtorch_cpu.so: in <root>/lib for PyTorch and
# LibTorch's zip (TorchConfig.cmake in <root>/share/cmake/Torch), in the multiarch folder for
# Debian (TorchConfig.cmake in /usr/lib/x86_64-linux-gnu/cmake/Torch).
torch_cmake_dir="$(dirname "$torch_config")"
if [ ! -f "$torch_cmake_dir/../../../lib/libtorch_cuda.so" ] && [ ! -f "$torch_cmake_dir/../../libtorch_cuda.so" ]; then
  say "the LibTorch in $torch_prefix (from $torch_from) has no CUDA (no libtorch_cuda.so beside it): install a CUDA build (PyTorch for CUDA, or Debian's libtorch-cuda-dev)"
  exit 2
fi
gpu="$(timeout 60 nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)"
driver="$(timeout 60 nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)"
cuda="$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
torch_version="$(timeout 120 python3 -c 'import torch; print(torch.__version__)' 2>/dev/null || echo "?")"
note "# StreetGAN GPU check, $(date -u '+%F %H:%M UTC')"
note ""
note "- GPU: $gpu × $gpus, driver $driver, CUDA (nvcc) ${cuda:-none}"
note "- LibTorch: $torch_prefix (PyTorch $torch_version)"
note "- host: $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}"), $(nproc) cores, $(g++ --version | head -n 1)"
note "- source: $(git -C "$source_dir" rev-parse --short HEAD 2>/dev/null || echo '?')"
note ""
note "| step | result | time |"
note "|---|---|---|"

# --- dependencies -------------------------------------------------------------------------------
prefix_path="$torch_prefix"
linker_flags=""
if [ -n "$deps" ]; then
  [ -f "$deps" ] || { say "--deps: no file '$deps' (a bundle of packaging/gpu-deps.sh)"; exit 2; }
  not_bundle() { say "--deps: '$deps' is not a bundle of packaging/gpu-deps.sh ($1)"; exit 2; }
  rm -rf "$work/deps"; mkdir -p "$work/deps"
  # --force-local: a name with a colon is a file here, not a remote archive.
  tar --force-local --no-same-owner -C "$work/deps" -xJf "$deps" >>"$log" 2>&1 || not_bundle "not an xz tar archive"
  [ -f "$work/deps/usr/README.streetgan" ] && [ -d "$work/deps/usr/lib" ] && [ ! -L "$work/deps/usr" ] &&
    [ ! -L "$work/deps/usr/lib" ] || not_bundle "no usr/README.streetgan and usr/lib"
  # Every link in it must stay inside it: removing a stub below must never reach the host.
  while IFS= read -r -d '' link; do
    case "$(realpath -m -- "$link")" in "$work/deps/"*) ;; *) not_bundle "a link leads out of it: ${link#"$work/deps/"}" ;; esac
  done < <(find "$work/deps" -type l -print0)
  dl="$work/deps/usr/lib"
  # A stub is only for a library the host lacks: where the host has the real one, use that.
  host_libraries="$( { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | awk 'NR > 1 {print $1}')"
  # read -a: a name such as '*' stays a name, never a glob of the current folder.
  read -r -a listed <<< "$(sed -n 's/^stubs (every function traps): //p; s/^the host.s own if it has one: //p' "$work/deps/usr/README.streetgan" | tr '\n' ' ')"
  for s in ${listed[@]+"${listed[@]}"}; do
    [[ "$s" =~ ^[A-Za-z0-9._+-]+$ ]] || not_bundle "a stub named '$s'"
    if grep -qxF -- "$s" <<<"$host_libraries"; then rm -f -- "${dl:?}/$s"; fi
  done
  prefix_path="$torch_prefix;$work/deps/usr"
  export PKG_CONFIG_PATH="$dl/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export PKG_CONFIG_SYSROOT_DIR="$work/deps"
  # Qt keeps Debian's paths in the bundle (its CMake files find everything relative to themselves).
  export LD_LIBRARY_PATH="$dl:$work/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export QT_PLUGIN_PATH="$work/deps/usr/lib/x86_64-linux-gnu/qt6/plugins"
  # pkgconf drops -L/usr/lib and -I/usr/include as system folders before it prefixes the sysroot;
  # keep them, and let the compiler driver search the bundle for -l too.
  export PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1
  export LIBRARY_PATH="$dl${LIBRARY_PATH:+:$LIBRARY_PATH}"
  linker_flags="-Wl,-rpath-link,$dl"
fi

# The suites that read STREETGAN_TEST_DEVICE: those that include tests/support/test_device.h.
device_suites=()
for f in "$source_dir"/tests/core/tst_*.cpp "$source_dir"/tests/cli/tst_*.cpp; do
  grep -q '^#include "tests/support/test_device.h"' "$f" && device_suites+=("$(basename "$f" .cpp)")
done

if [ "$dry_run" -eq 1 ]; then
  echo "GPU: $gpu x $gpus, driver $driver, CUDA (nvcc) ${cuda:-none}"
  echo "LibTorch: $torch_prefix (from $torch_from)"
  host_packages="the host's own packages"
  echo "dependencies: ${deps:-$host_packages}"
  if [ "$suites" -eq 1 ]; then echo "suites on cuda: ${device_suites[*]}"; else echo "suites: none (--no-suites)"; fi
  echo "would run: configure and build streetgan ($jobs jobs); device auto; train on cuda in fp32, bf16, fp16 and with CUDA graphs; the system event; resume$([ "$gpus" -ge 2 ] && echo "; 2 ranks over NCCL")"
  if [ "$bench" -eq 0 ]; then echo "benchmark: none (--no-bench)"
  elif [ "$quick" -eq 1 ]; then echo "benchmark: 3 configurations, 3 runs each (--quick); naive-64 256 bf16 also with torch.compile, CUDA graphs and real batches"
  else echo "benchmark: naive-64 and safe-128 at batch 256 and 1024 in fp32, bf16 and fp16, 5 runs each; naive-64 256 bf16 also with torch.compile, CUDA graphs and real batches"; fi
  echo "output: $out"
  exit 0
fi

# From here on everything stays under --out.
{ cat "$log" > "$out/gpu-check.log" && cat "$summary" > "$out/summary.md"; } 2>/dev/null ||
  { echo "gpu-check: --out: cannot write gpu-check.log and summary.md in $out" >&2; exit 2; }
rm -f -- "$log" "$summary"
log="$out/gpu-check.log"; summary="$out/summary.md"; committed=1

# --- build --------------------------------------------------------------------------------------
build="$work/build"
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-$(timeout 60 nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1)}"
configure() {
  # The dependency bundle carries no ONNX library (gpu-deps.sh): ONNX export is left out.
  cmake -S "$source_dir" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix_path" -DSTREETGAN_ONNX=OFF \
    -DCMAKE_EXE_LINKER_FLAGS="$linker_flags" -DCMAKE_SHARED_LINKER_FLAGS="$linker_flags" "$@"
}
targets=(streetgan)
if [ "$suites" -eq 1 ]; then
  # The engine and its suites need Qt 6 Core, Gui and Test (the host's, or the bundle's).
  # Only the device suites go into the test programs (tests/CMakeLists.txt, STREETGAN_TEST_SUITES).
  device_suite_list="$(IFS=';'; echo "${device_suites[*]}")"
  if step "configure (engine and suites, Release)" configure -DSTREETGAN_CLI_ONLY=OFF -DSTREETGAN_ENGINE_ONLY=ON \
       -DSTREETGAN_TEST_SUITES="$device_suite_list"; then
    targets+=(streetgan_test_suites)
  else
    say "no suites: CMake could not configure them (Qt 6 Core, Gui and Test missing? pass --deps, or --no-suites)"
    rm -rf "$build"
    suites=0
  fi
fi
[ "${#targets[@]}" -gt 1 ] || step "configure (CLI only, Release)" configure -DSTREETGAN_CLI_ONLY=ON -DSTREETGAN_ENGINE_ONLY=OFF
grep -q "STREETGAN_CUDA_GRAPHS=1" "$build/build.ninja" 2>/dev/null && note "| CUDA graphs | compiled in | |" ||
  note "| CUDA graphs | NOT compiled in (see the configure output in the log) | |"
if ! step "build streetgan$([ "${#targets[@]}" -gt 1 ] && echo " and ${#device_suites[@]} suites") ($jobs jobs)" \
    cmake --build "$build" --target "${targets[@]}" -j "$jobs" -- -k 0; then
  grep -E "error:|undefined reference" "$log" | head -n 40 > "$out/build-errors.txt"
  say "the build failed; the first errors are in $out/build-errors.txt"
  note ""; note "Build failed: the first errors are in build-errors.txt."
  exit 1
fi
sg="$build/app/cli/streetgan"
grep -q "USE_C10D_NCCL" "$build/build.ninja" && note "| NCCL (USE_C10D_NCCL) | compiled in | |" || note "| NCCL (USE_C10D_NCCL) | NOT compiled in | |"

# --- the suites on the GPU -------------------------------------------------------------------------
# Each suite that reads STREETGAN_TEST_DEVICE, on cuda: tolerances where the CPU compares exactly.
if [ "${#targets[@]}" -gt 1 ]; then
  for t in "${device_suites[@]}"; do
    step "suite $t on cuda" env STREETGAN_TEST_DEVICE=cuda QT_QPA_PLATFORM=offscreen \
      ctest --test-dir "$build" -R "^$t\$" --output-on-failure --timeout 900 --no-tests=error
  done
fi

# --- what a researcher meets on the GPU -----------------------------------------------------------
# Paths go to bash -c as arguments, never inside its script: a quote in --out must stay a quote.
step "device auto picks the GPU" bash -c '"$1" bench train --device auto --steps 2 --warmup 1 --batch 16 2>&1 | tee -a /dev/stderr | grep cuda >/dev/null' _ "$sg"
# 64 images (2 cities x 4 sequences x 8 frames): the step counts below are of this size.
step "demo data" "$sg" demo-data --out "$work/demo" --cities 2 --sequences 4 --frames 8
run="$out/run-cuda"; rm -rf "$run"
# finished_and_finite EVENTS: the run completed and every step's losses are finite.
finished_and_finite() {
  python3 - "$1" <<'EOF'
import json, math, sys
events = [json.loads(l) for l in open(sys.argv[1])]
finished = [e for e in events if e.get("type") == "run_finished"]
steps = [e for e in events if e.get("type") == "step"]
assert finished and finished[-1].get("status") == "completed", finished
assert steps and all(math.isfinite(e["loss_d"]) and math.isfinite(e["loss_g"]) for e in steps), "non-finite loss"
print(f"{len(steps)} steps, last loss_d {steps[-1]['loss_d']:.3f} loss_g {steps[-1]['loss_g']:.3f}")
EOF
}
for p in fp32 bf16 fp16; do
  rm -rf "$run-$p"
  step "train 2 epochs on cuda, $p" "$sg" train --dataroot "$work/demo" --device cuda --precision "$p" --preset demo \
    --epochs 2 --run-dir "$run-$p" -c '{"log_frequency": 1, "save_frequency": 1}'
  step "  run finished, losses finite ($p)" finished_and_finite "$run-$p/events.jsonl"
done
rm -rf "$run-graphs"
# Batches of 16: 4 a epoch, so the graph is recorded at the 4th step and replayed for 12 more.
step "train 4 epochs on cuda, bf16, CUDA graphs" "$sg" train --dataroot "$work/demo" --device cuda --precision bf16 \
  --preset demo --epochs 4 --cuda-graphs on --run-dir "$run-graphs" -t '{"batch_size": 16}' \
  -c '{"log_frequency": 1, "save_frequency": 1}'
step "  run finished, losses finite (CUDA graphs)" finished_and_finite "$run-graphs/events.jsonl"
step "  the step ran as a CUDA graph, no warning" bash -c 'grep -q "the step runs as a CUDA graph" "$1" &&
  ! grep "\"type\":\"warning\"" "$2" | grep -q "CUDA graph"' _ "$log" "$run-graphs/events.jsonl"
step "system event has the GPU's figures (NVML)" bash -c 'grep "\"type\":\"system\"" "$1" | tail -n 1 | tee -a /dev/stderr | grep gpu >/dev/null' _ "$run-fp32/events.jsonl"
step "resume on cuda" "$sg" train --dataroot "$work/demo" --device cuda --resume --epochs 3 --run-dir "$run-fp32"
if [ "$gpus" -ge 2 ]; then
  rm -rf "$run-nccl"
  step "2 ranks over NCCL" "$sg" train --dataroot "$work/demo" --device cuda --nproc 2 --preset demo --epochs 1 \
    --run-dir "$run-nccl"
fi

# --- the benchmark: ours beside PyTorch on the same GPU ------------------------------------------
if [ "$bench" -eq 0 ]; then
  configs=()
elif [ "$quick" -eq 1 ]; then
  configs=("naive-64 256 fp32" "naive-64 256 bf16" "safe-128 256 bf16")
  repeats=3
else
  configs=()
  for preset in naive-64 safe-128; do for batch in 256 1024; do for p in fp32 bf16 fp16; do
    configs+=("$preset $batch $p"); done; done; done
  repeats=5
fi
# The headline configuration also gets PyTorch tuned and torch.compile of the same step, default
# and (without --quick, which must fit a 15-minute lease) reduce-overhead (PyTorch 2; each run
# compiles anew, about a minute; max-autotune's search takes longer still, so bench_train.py runs
# it by hand), the engine's step as a CUDA graph, and the engine on real batches from an image cache of the demo
# data, as a share of the synthetic rate (is the loader keeping up?).
headline="naive-64 256 bf16"
headline_extra=()
if [ "${#configs[@]}" -gt 0 ]; then
  python3 -c 'import sys, torch; sys.exit(0 if int(torch.__version__.split(".")[0]) >= 2 else 1)' 2>/dev/null &&
    if [ "$quick" -eq 1 ]; then headline_extra+=(--variants eager,tuned,compile)
    else headline_extra+=(--variants eager,tuned,compile,reduce-overhead); fi
  grep -q "STREETGAN_CUDA_GRAPHS=1" "$build/build.ninja" 2>/dev/null && headline_extra+=(--cuda-graphs)
  step "image cache of the demo data (64 px)" "$sg" cache build --dataroot "$work/demo" --out "$work/demo-64.cache" \
    --preset naive-64 && headline_extra+=(--data "$work/demo-64.cache" --dataroot "$work/demo")
fi
if [ "${#configs[@]}" -gt 0 ]; then
  note ""
  note "Training step, images/s, median of $repeats (bench/bench_train.py; synthetic batches on the GPU; $headline also with torch.compile, CUDA graphs and real batches):"
  note ""
fi
tables=()
for c in ${configs[@]+"${configs[@]}"}; do
  read -r preset batch p <<< "$c"
  tables+=("$work/bench-$preset-$batch-$p.md")
  extra=()
  [ "$c" = "$headline" ] && extra=(${headline_extra[@]+"${headline_extra[@]}"})
  step "bench $preset batch $batch $p" python3 "$source_dir/bench/bench_train.py" --streetgan "$sg" --device cuda \
    --preset "$preset" --batch "$batch" --precision "$p" --repeats "$repeats" --steps 30 --warmup 5 \
    ${extra[@]+"${extra[@]}"} --table-out "$work/bench-$preset-$batch-$p.md"
done
# One table of every configuration that produced one (bench/bench_table.py: the union of columns).
made=()
for f in ${tables[@]+"${tables[@]}"}; do [ -f "$f" ] && made+=("$f"); done
if [ "${#made[@]}" -gt 0 ]; then
  python3 "$source_dir/bench/bench_table.py" "${made[@]}" >> "$summary" || { say "could not merge the benchmark tables"; failures=$((failures + 1)); }
fi

note ""
note "Total: $(( $(date +%s) - start_all )) s; $failures step(s) failed."
cat "$summary"
[ "$failures" -eq 0 ]
