#!/usr/bin/env bash
# Installs everything StreetGAN Studio needs to build, run and test on Debian bookworm (as root).
#   packaging/install-deps.sh            build + runtime + test dependencies
#   packaging/install-deps.sh --cli-only only what the headless `streetgan` CLI needs (no Qt)
#   packaging/install-deps.sh --bench    also the Python reference used by bench/ scripts
set -euo pipefail

cli_only=0
bench=0
for arg in "$@"; do
  case "$arg" in
    --cli-only) cli_only=1 ;;
    --bench) bench=1 ;;
    *) echo "install-deps.sh: unknown option '$arg' (allowed: --cli-only, --bench)" >&2; exit 2 ;;
  esac
done

packages=(
  # toolchain (help2man writes the man pages from --help; mold links in a fraction of ld's time)
  build-essential cmake ninja-build ccache mold pkg-config git help2man
  # engine: LibTorch 1.13 (CPU) with a fast BLAS and Gloo's headers (distributed training),
  # OpenCV for image I/O, JSON
  libtorch-dev libopenblas0-pthread libgloo-dev
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  nlohmann-json3-dev
  # streetgan serve: the HTTP library
  libcpp-httplib-dev
  # streetgan export --format onnx: Debian's ONNX library (the schema's protobuf classes, its checker)
  libonnx-dev
  # export: FFmpeg's libraries (libavcodec brings libx264 and libvpx)
  libavcodec-dev libavformat-dev libavfilter-dev libswscale-dev libavutil-dev
  # remote training over SSH: the client the studio drives; the tests start a real sshd
  openssh-client openssh-server
  # tools the tests drive (iproute2: the multi-node tests' hosts are network namespaces)
  procps iproute2
)
if [ "$cli_only" -eq 0 ]; then
  packages+=(
    qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev libxkbcommon-dev
    # tests: libjpeg writes the CMYK JPEG of the bad-input cases; torchrun (python3-torch)
    # launches the distributed tests' ranks; numpy and scipy are the quality metrics' references
    libjpeg-dev python3-torch python3-numpy python3-scipy
    # tests: headless Chromium opens the gallery page of `streetgan serve`; Chromium and Firefox
    # open the page of `streetgan publish`
    chromium firefox-esr
    # tests: ONNX's checker (python3-onnx) and ONNX Runtime for Node (npm, web/package-lock.json)
    # check exported models
    python3-onnx nodejs
  )
  # A Node.js from elsewhere (NodeSource) brings its own npm; Debian's would conflict with it.
  command -v npm >/dev/null || packages+=(npm)
fi
if [ "$bench" -eq 1 ]; then
  # the reference loader, the photographs bench/make_corpus.py cuts its corpus from, and the
  # `ffmpeg` program the reference walk export pipes its frames into
  packages+=(python3 python3-torch python3-torchvision python3-numpy python3-scipy python3-pil opencv-doc ffmpeg
    # bench_serve: the load generator, the original tool's Flask app as the reference, and gunicorn
    # to serve it as a researcher would deploy it
    wrk python3-flask gunicorn)
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: must run as root (it calls apt-get)" >&2
  exit 1
fi

bash "$(dirname "$0")/apt-install.sh" "${packages[@]}"
echo "install-deps.sh: all ${#packages[@]} packages installed"
