#!/usr/bin/env bash
# Builds StreetGAN Studio against LibTorch 2.x and runs every test suite there: a Debian trixie
# tree (libtorch-dev 2.6, Qt 6.8, OpenCV 4.10, FFmpeg 7.1) is debootstrapped from the mirror the
# host's apt sources name, the source tree is bind-mounted into it read-only, and the project is
# configured, built (CLI, core, widgets, studio, tests) and tested through CTest in a chroot.
# The tree and the build folder inside it are kept between runs, so a second run only installs
# what is missing and rebuilds what changed.
# Run as root on Debian (bookworm): bash packaging/check-libtorch2.sh [--prepare]
#   --prepare             only make the tree and install its packages (the download), then stop:
#                         .ci/run does this in the background while it builds the project
#   STREETGAN_TRIXIE_DIR  where the tree lives (default /var/cache/streetgan/trixie; about 3 GB,
#                         plus the build folder)
#   STREETGAN_CHECK_JOBS  parallel compile jobs and test processes (default 2)
#   STREETGAN_CHECK_SCOPE all (default): everything and every suite; engine: the CLI and the
#                         suites of tests/core and tests/cli, everything that runs LibTorch (the
#                         widgets and studio suites drive the same CLI), at about half the
#                         build and test time; gpu: what packaging/gpu-check.sh builds on a GPU
#                         host (the CLI and the suites that read STREETGAN_TEST_DEVICE) and
#                         tst_distributed, the suites a CUDA build changes most; what .ci/run uses
#   STREETGAN_LIBTORCH    cpu (default): trixie's libtorch-dev; cuda: its CUDA build instead
#                         (contrib's libtorch-cuda-dev with NCCL, non-free's CUDA 12.4 toolkit and
#                         libraries; tree /var/cache/streetgan/trixie-cuda, about 10 GB). No GPU
#                         is needed: the project is built with USE_C10D_NCCL and everything behind
#                         the CUDA headers, and the suites run on the CPU. cuDNN cannot be had
#                         offline (contrib's nvidia-cudnn downloads it from NVIDIA when installed):
#                         a local placeholder package stands in for that installer, and a stub
#                         libcudnn.so.9 defines the 84 functions LibTorch imports, each of which
#                         stops the process with a message if it is ever called (LibTorch is
#                         linked with BIND_NOW, so the loader wants every one of them defined).
set -euo pipefail

source_dir="$(cd "$(dirname "$0")/.." && pwd)"
prepare_only=0
for arg in "$@"; do
  case "$arg" in
    --prepare) prepare_only=1 ;;
    *) echo "check-libtorch2: unknown option '$arg' (allowed: --prepare)" >&2; exit 2 ;;
  esac
done
variant="${STREETGAN_LIBTORCH:-cpu}"
case "$variant" in
  cpu) default_tree=/var/cache/streetgan/trixie ;;
  cuda) default_tree=/var/cache/streetgan/trixie-cuda ;;
  *) echo "check-libtorch2: STREETGAN_LIBTORCH is '$variant'; allowed: cpu, cuda" >&2; exit 2 ;;
esac
tree="$(realpath -m "${STREETGAN_TRIXIE_DIR:-$default_tree}")"
jobs="${STREETGAN_CHECK_JOBS:-2}"
scope="${STREETGAN_CHECK_SCOPE:-all}"
case "$scope" in
  all | engine | gpu) ;;
  *) echo "check-libtorch2: STREETGAN_CHECK_SCOPE is '$scope'; allowed: all, engine, gpu" >&2; exit 2 ;;
esac
stamp="$tree/.streetgan-tree-ready"
# Inside the tree: the source at its host path (messages name the same files), and a build
# folder per source path, so two checkouts never share (and confuse) one build.
build_dir="/var/cache/streetgan-build/$(printf '%s' "$source_dir" | tr -c 'A-Za-z0-9._-' '_')"

packages=(
  # toolchain (mold: the links take a fraction of GNU ld's time)
  g++ make cmake ninja-build pkg-config mold
  # engine: LibTorch 2.6 (CPU) with a fast BLAS, OpenCV for image I/O, JSON
  libtorch-dev libopenblas0-pthread libgloo-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  nlohmann-json3-dev libcpp-httplib-dev
  # streetgan export --format onnx: the ONNX library
  libonnx-dev
  # export: FFmpeg's libraries
  libavcodec-dev libavformat-dev libavfilter-dev libswscale-dev libavutil-dev
  # remote training: the tests start a real sshd and drive the ssh client
  openssh-client openssh-server
  # tools the tests drive (iproute2: the multi-node tests' hosts are network namespaces)
  procps iproute2
  # studio and tests: Qt 6 (trixie's qt6-base-dev holds what bookworm's libqt6opengl6-dev did)
  qt6-base-dev qt6-charts-dev libgl-dev libxkbcommon-dev
  # tests: libjpeg writes the CMYK JPEG of the bad-input cases
  libjpeg-dev
  # the same LibTorch from Python, for packaging/libtorch2-nan-repro.py (no StreetGAN code); numpy
  # and scipy, the quality metrics' references in tests/core/reference; setuptools, which
  # torch.compile's C++ builder imports (bench/bench_train.py's compile sides on the CPU)
  python3-torch python3-numpy python3-scipy python3-setuptools
)
if [ "$variant" = cuda ]; then
  # The CUDA build of the same LibTorch, Gloo and PyTorch, NCCL, and CUDA 12.4's compiler (its
  # CMake files enable the CUDA language) with the GCC it supports.
  for i in "${!packages[@]}"; do
    case "${packages[$i]}" in
      libtorch-dev) packages[i]=libtorch-cuda-dev ;;
      libgloo-dev) packages[i]=libgloo-cuda-dev ;;
      python3-torch) packages[i]=python3-torch-cuda ;;
    esac
  done
  packages+=(libnccl-dev nvidia-cuda-toolkit g++-13)
fi

say() { echo "check-libtorch2: $*"; }
fail() { echo "check-libtorch2: $*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
  fail "must run as root (it calls apt-get, debootstrap, mount and chroot)"
fi

# host_mirror, mounted_under
source "$source_dir/packaging/tree-helpers.sh"

# Every mount this script makes, undone on exit (success, failure or interrupt): processes left
# running inside the tree are ended first (by process id, only those whose root is the tree).
mounts=()
cleanup() {
  local proc i
  for proc in /proc/[0-9]*; do
    if [ "$(readlink "$proc/root" 2>/dev/null || true)" = "$tree" ]; then
      kill -KILL "${proc#/proc/}" 2>/dev/null || true
    fi
  done
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${mounts[$i]}" 2>/dev/null || umount -R -l "${mounts[$i]}" 2>/dev/null ||
      echo "check-libtorch2: could not unmount ${mounts[$i]}" >&2
  done
  mounts=()
  rm -f "${times_file:-}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mount_into_tree() {
  mkdir -p "$tree/proc" "$tree/sys" "$tree/dev" "$tree$source_dir"
  mount -t proc proc "$tree/proc"
  mounts+=("$tree/proc")
  # rslave: unmounting these recursive binds never reaches the host's own /sys and /dev.
  mount --rbind /sys "$tree/sys"
  mounts+=("$tree/sys")
  mount --make-rslave "$tree/sys"
  mount --rbind /dev "$tree/dev"
  mounts+=("$tree/dev")
  mount --make-rslave "$tree/dev"
  mount --bind "$source_dir" "$tree$source_dir"
  mounts+=("$tree$source_dir")
  mount -o remount,bind,ro "$tree$source_dir"
}

in_tree() {
  chroot "$tree" /usr/bin/env -i HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    "$@"
}

# One check at a time per tree.
mkdir -p "$(dirname "$tree")"
exec 9>"$tree.lock"
flock -n 9 || fail "another check is using $tree (lock $tree.lock)"

# Each phase's wall time, and the CPU time (user + system) of the processes it ran: on a busy
# machine the second says what the phase costs on an idle one.
now() { date +%s; }
times_file="$(mktemp)"
cpu_now() {  # sets cpu: CPU seconds of every finished child so far (`times` in this shell)
  times >"$times_file"
  cpu="$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d\n", t }' "$times_file")"
}
phase_start() { start=$(now); cpu_now; cpu_start=$cpu; }
phase_end() { cpu_now; printf -v "$1" '%d s (CPU %d s)' "$(($(now) - start))" "$((cpu - cpu_start))"; }
phase_tree="" phase_packages="" phase_build="" phase_tests=""

# 1. The tree: debootstrapped once, reused while its stamp is there.
phase_start
if [ -f "$stamp" ]; then
  say "reusing the trixie tree in $tree"
else
  if ! command -v debootstrap >/dev/null; then
    say "installing debootstrap on the host"
    bash "$source_dir/packaging/apt-install.sh" debootstrap
  fi
  if [ -e "$tree" ]; then
    mounted_under "$tree" && fail "$tree has something mounted in it; unmount it first"
    say "removing the unfinished tree in $tree"
    rm -rf --one-file-system "$tree"
  fi
  mirror="$(host_mirror)"
  say "creating a trixie tree in $tree from $mirror"
  debootstrap --variant=minbase trixie "$tree" "$mirror" >"$tree.debootstrap.log" 2>&1 ||
    fail "debootstrap failed; see $tree.debootstrap.log"
  rm -f "$tree.debootstrap.log"
  # Packages may not start services in the tree (openssh-server would start an sshd on port 22).
  printf '#!/bin/sh\nexit 101\n' >"$tree/usr/sbin/policy-rc.d"
  chmod 755 "$tree/usr/sbin/policy-rc.d"
fi
phase_end phase_tree

mount_into_tree
cp /etc/resolv.conf "$tree/etc/resolv.conf" 2>/dev/null || true
if [ "$variant" = cuda ]; then
  # contrib (LibTorch's CUDA build, NCCL) and non-free (CUDA) beside main.
  sources="$tree/etc/apt/sources.list"
  if ! grep -qs '^deb .* trixie main contrib non-free' "$sources"; then
    echo "deb $(host_mirror) trixie main contrib non-free" >"$sources"
    rm -f "$stamp"
  fi
fi

# 2. The packages: whatever of the list the tree lacks (all of it the first time).
phase_start
missing=()
for p in "${packages[@]}"; do
  # shellcheck disable=SC2016  # ${Status} is dpkg-query's field, not the shell's
  in_tree dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${#missing[@]} packages in the tree"
  # Not ready until the install has finished: one stopped halfway (a signal, CI's end) is resumed
  # by the next run rather than taken for a finished tree.
  rm -f "$stamp"
  in_tree dpkg --configure -a >/dev/null 2>&1 || true
  in_tree apt-get update -qq
  if [ "$variant" = cuda ] && ! in_tree dpkg-query -W -f='${Status}' nvidia-cudnn 2>/dev/null | grep -q "install ok installed"; then
    # contrib's nvidia-cudnn is an installer that downloads cuDNN from NVIDIA: a placeholder of
    # the version LibTorch asks for, built with equivs, stands in for it.
    say "building a placeholder for the nvidia-cudnn installer (equivs)"
    in_tree apt-get install -y -qq --no-install-recommends equivs >/dev/null
    in_tree sh -c 'mkdir -p /tmp/streetgan-cudnn && cd /tmp/streetgan-cudnn &&
      printf "Section: contrib/libs\nPriority: optional\nStandards-Version: 4.6.2\nPackage: nvidia-cudnn\nVersion: 9.0.0.312~cuda12+streetgan\nArchitecture: all\nDescription: placeholder for the cuDNN installer\n StreetGAN check tree: no network for NVIDIA downloads; libcudnn.so.9 is a stub.\n" >nvidia-cudnn.ctl &&
      equivs-build nvidia-cudnn.ctl >/dev/null 2>&1 && dpkg -i nvidia-cudnn_*.deb >/dev/null && cd / && rm -rf /tmp/streetgan-cudnn' ||
      fail "could not build or install the nvidia-cudnn placeholder in the tree"
  fi
  in_tree apt-get install -y -qq --no-install-recommends "${missing[@]}" >"$tree/var/log/streetgan-apt.log" 2>&1 || {
    tail -n 20 "$tree/var/log/streetgan-apt.log" >&2
    fail "apt-get install failed in the tree; see $tree/var/log/streetgan-apt.log"
  }
  in_tree apt-get clean
fi
if [ "$variant" = cuda ]; then
  # The stub cuDNN: every cudnn* function LibTorch imports (under their version node), each one
  # stopping the process with a message; the loader needs them defined (BIND_NOW), nothing here
  # calls them (no GPU).
  lib_dir="$tree/usr/lib/x86_64-linux-gnu"
  if [ ! -e "$lib_dir/libcudnn.so.9" ] || ! grep -qs "is a stub" "$lib_dir/libcudnn.so.9"; then
    say "making a stub libcudnn.so.9 from the functions LibTorch imports"
    stub_c="$tree/tmp/streetgan-cudnn-stub.c" stub_map="$tree/tmp/streetgan-cudnn-stub.map"
    mapfile -t cudnn_functions < <(for l in "$lib_dir"/libtorch_cuda.so.* "$lib_dir"/libtorch_python.so.*; do
      [ -f "$l" ] && [ ! -L "$l" ] && nm -D --undefined-only --with-symbol-versions "$l"; done |
      awk '{print $2}' | grep '@libcudnn\.so\.9$' | sed 's/@.*//' | sort -u)
    [ "${#cudnn_functions[@]}" -gt 0 ] || fail "found no cuDNN imports in $lib_dir/libtorch_cuda.so.*"
    {
      echo '#include <stdio.h>'
      echo '#include <stdlib.h>'
      echo 'static void trap(const char* name) { fprintf(stderr, "%s called, but libcudnn.so.9 is a stub (the StreetGAN check tree has no cuDNN)\n", name); abort(); }'
      for f in "${cudnn_functions[@]}"; do echo "void $f(void) { trap(\"$f\"); }"; done
    } >"$stub_c"
    { printf 'libcudnn.so.9 { global: '; printf '%s; ' "${cudnn_functions[@]}"; echo 'local: *; };'; } >"$stub_map"
    in_tree gcc -shared -fPIC -O1 -Wl,-soname,libcudnn.so.9 -Wl,--version-script=/tmp/streetgan-cudnn-stub.map \
      -o /usr/lib/x86_64-linux-gnu/libcudnn.so.9 /tmp/streetgan-cudnn-stub.c || fail "could not build the stub libcudnn.so.9"
    rm -f "$stub_c" "$stub_map"
    say "stub libcudnn.so.9: ${#cudnn_functions[@]} functions"
  fi
fi
touch "$stamp"
phase_end phase_packages
if [ "$prepare_only" -eq 1 ]; then
  say "the $variant tree in $tree is ready: tree $phase_tree, packages $phase_packages"
  exit 0
fi

version_h="$tree/usr/include/torch/csrc/api/include/torch/version.h"
[ -f "$version_h" ] || fail "$version_h is missing: libtorch-dev is not installed in the tree"
torch_version="$(awk '/define TORCH_VERSION_(MAJOR|MINOR|PATCH)/ { v = v (v == "" ? "" : ".") $3 } END { print v }' "$version_h")"
say "building against LibTorch $torch_version, $variant build (torch/version.h in the tree)"

# 3. Configure and build: the whole project (CLI, core, widgets, studio and the tests), or the
# engine's part of it.
phase_start
cuda_flags=()
# nvcc 12.4 accepts GCC up to 13 (trixie's default is 14).
[ "$variant" = cuda ] && cuda_flags=(-DCMAKE_CUDA_HOST_COMPILER=g++-13)
in_tree mkdir -p "$build_dir"
# Optimised as the README's build is (-O2), without its debug information: faster to compile
# and link, and a smaller cache.
# The engine and gpu scopes are configured as packaging/gpu-check.sh configures a GPU host (Qt Core, Gui
# and Test only), so that configuration is built on every change too.
engine_only=OFF
[ "$scope" != all ] && engine_only=ON
# The gpu scope's suites: the same choice as packaging/gpu-check.sh (those that include
# tests/support/test_device.h), and tst_distributed; the other scopes build every suite.
suites=""
if [ "$scope" = gpu ]; then
  suites="tst_distributed"
  for test_source in "$source_dir"/tests/core/tst_*.cpp "$source_dir"/tests/cli/tst_*.cpp; do
    grep -q '^#include "tests/support/test_device.h"' "$test_source" && suites+=";$(basename "$test_source" .cpp)"
  done
fi
in_tree cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DSTREETGAN_CLI_ONLY=OFF -DSTREETGAN_ENGINE_ONLY="$engine_only" \
  -DSTREETGAN_TEST_SUITES="$suites" "${cuda_flags[@]}" >/dev/null ||
  fail "cmake could not configure the project against LibTorch $torch_version"
if [ "$variant" = cuda ]; then
  grep -q -- '-DUSE_C10D_NCCL' "$tree$build_dir/build.ninja" || fail "the CUDA build does not define USE_C10D_NCCL"
  grep -q -- '-DSTREETGAN_CUDA_GRAPHS=1' "$tree$build_dir/build.ninja" ||
    fail "the CUDA build has no CUDA graphs (ATen/cuda/CUDAGraph.h did not compile: see core/CMakeLists.txt)"
  say "configured against LibTorch $torch_version with CUDA: USE_C10D_NCCL and CUDA graphs are on"
fi
# The engine and gpu scopes build the CLI and the test programs of tests/core and tests/cli (the
# suites configured above), and nothing of the widgets or the studio window.
build_targets=()
test_labels=()
if [ "$scope" != all ]; then
  build_targets=(--target streetgan streetgan_test_suites)
  test_labels=(-L '^(core|cli)$')
fi
in_tree cmake --build "$build_dir" -j "$jobs" "${build_targets[@]}" ||
  fail "the build against LibTorch $torch_version failed"
phase_end phase_build

# 4. Does this LibTorch train a DCGAN with more than one thread? PyTorch alone, no code of ours:
# on one 2-core AMD EPYC build machine trixie's 2.6 returned NaN gradients from oneDNN's
# convolutions with 2 threads in 6 of 8 runs (1 thread: 0 of 8); on another (AVX2 only) in none of
# 22. Reported, not fatal: where it happens the suites below train with one thread
# (STREETGAN_TEST_THREADS), so that they test our code, not that defect.
threads_for_tests=2
if in_tree python3 "$source_dir/packaging/libtorch2-nan-repro.py" --threads 2 --runs 8; then
  say "LibTorch $torch_version trains with 2 threads without NaN"
else
  threads_for_tests=1
  say "LibTorch $torch_version gives NaN gradients with 2 threads (a LibTorch defect, see packaging/libtorch2-nan-repro.py); the suites train with 1 thread"
fi

# 5. Every test suite through CTest.
phase_start
tests_ok=1
# The tree has no browser: the gallery page's Chromium test runs in the bookworm suite only.
in_tree env STREETGAN_TEST_THREADS="$threads_for_tests" \
  STREETGAN_TEST_NO_CHROMIUM="the LibTorch 2.x tree has no Chromium; the bookworm suite opens the page" \
  ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" --timeout 900 "${test_labels[@]}" || tests_ok=0
phase_end phase_tests

say "LibTorch $torch_version, scope $scope; tree $phase_tree, packages $phase_packages, configure+build $phase_build, tests $phase_tests"
say "test output (sample grids, screenshots): $tree$build_dir/tests/output"
[ "$tests_ok" -eq 1 ] || fail "tests failed against LibTorch $torch_version"
say "all tests passed against LibTorch $torch_version"
