#!/usr/bin/env bash
# Packs what a GPU host without Debian's libraries needs to build and run the streetgan CLI against
# its own CUDA LibTorch (packaging/gpu-check.sh --deps FILE): the headers and libraries of OpenCV's
# three image modules (core, imgproc, imgcodecs), Gloo's headers, and those of FFmpeg's (avcodec, avformat, avfilter,
# swscale, swresample, avutil), with their pkg-config files, taken from this Debian machine.
#
# Those libraries need about 250 more Debian packages at load time (GDAL, GStreamer, x265, ...),
# too much to carry for code we never call on a training host. Each of those is replaced by a stub:
# a shared library with the same soname that defines exactly the symbols the carried libraries
# import from it (with their symbol versions), every function a trap (ud2: the process stops at
# once if one is ever called) and every object zero-filled at its real size. The stubs satisfy the
# loader and the linker; nothing of them runs while training, benchmarking, decoding JPEG/PNG or
# encoding H.264/VP9/GIF (libx264, libvpx, libjpeg, libpng are carried for real).
#
#   bash packaging/gpu-deps.sh [OUT.tar.xz]     (default .gpu-deps/streetgan-gpu-deps.tar.xz)
#
# Needs the packages of packaging/install-deps.sh (installed here: the real libraries are read
# to find each stub's symbols), binutils and gcc. Prints the bundle's size.
set -euo pipefail

out="${1:-.gpu-deps/streetgan-gpu-deps.tar.xz}"
arch_dir=/usr/lib/x86_64-linux-gnu
say() { echo "gpu-deps: $*" >&2; }

# Carried for real: what the engine calls, and the codecs the export tests encode with.
real_sonames=(
  libopencv_core.so.406 libopencv_imgproc.so.406 libopencv_imgcodecs.so.406 libtbb.so.12
  libjpeg.so.62 libpng16.so.16 libwebp.so.7 libwebpmux.so.3
  libavcodec.so.59 libavformat.so.59 libavfilter.so.8 libavutil.so.57 libswscale.so.6
  libswresample.so.4 libpostproc.so.56 libx264.so.164 libvpx.so.7 libcpp-httplib.so.0.11
)
dev_packages=(libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
              libavcodec-dev libavformat-dev libavfilter-dev libavutil-dev libswscale-dev
              libswresample-dev libpostproc-dev libcpp-httplib-dev libjpeg62-turbo-dev
              libgl-dev libglx-dev libopengl-dev libegl-dev)
# Qt 6 for the test suites that read STREETGAN_TEST_DEVICE (gpu-check.sh builds and runs them on
# the GPU): Core, Gui, DBus and Test with their headers, CMake files, moc and image-format plugins,
# kept at Debian's paths under usr/, since Qt's CMake files find everything relative to themselves.
# What Qt Gui links and no test calls (OpenGL, X11, fonts, D-Bus itself) is stubbed like the rest;
# the OpenGL headers and unversioned links above are for Qt's CMake check of OpenGL.
qt_packages=(libqt6core6 libqt6gui6 libqt6dbus6 libqt6test6 qt6-base-dev qt6-base-dev-tools qmake6)
qt_sonames=(libQt6Core.so.6 libQt6Gui.so.6 libQt6DBus.so.6 libQt6Test.so.6)
# What Qt Core calls while it runs (Unicode, the event loop, number formatting, hashing): real.
# Those after ICU are common libraries a host usually has, in a version as new or newer:
# gpu-check.sh uses the host's where it has one (else the host's own programs, cmake among them,
# would load Debian's copy from LD_LIBRARY_PATH).
qt_runtime_sonames=(libicuuc.so.72 libicui18n.so.72 libicudata.so.72 libglib-2.0.so.0 libpcre2-16.so.0
                    libpcre2-8.so.0 libdouble-conversion.so.3 libb2.so.1 libzstd.so.1)
host_preferred=(libglib-2.0.so.0 libpcre2-16.so.0 libpcre2-8.so.0 libdouble-conversion.so.3 libb2.so.1 libzstd.so.1)
# Stubbed functions that the carried libraries call while starting up or registering their
# codecs, whatever the program does: they return 0 instead of trapping.
harmless=(GDALAllRegister _ZN7Imf_3_114ChromaticitiesC1ERKN9Imath_3_14Vec2IfEES5_S5_S5_ aom_codec_version aom_codec_av1_cx aom_codec_get_caps x265_api_get_199)
# Every Linux host has these (the C and C++ runtimes): never carried, never stubbed.
system_re='^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libgomp|libz|ld-linux-x86-64)\.so'

for tool in readelf nm gcc tar xz dpkg; do
  command -v "$tool" >/dev/null || { say "needs $tool"; exit 2; }
done
# Every library read for its imports: the carried ones and Qt's.
analysed=("${real_sonames[@]}" "${qt_runtime_sonames[@]}" "${qt_sonames[@]}")
for s in "${analysed[@]}"; do
  [ -e "$arch_dir/$s" ] || { say "$arch_dir/$s is missing: run packaging/install-deps.sh first"; exit 2; }
done
for p in "${dev_packages[@]}" "${qt_packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || { say "package $p is not installed: run packaging/install-deps.sh (and apt-get install $p)"; exit 2; }
done

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
root="$stage/usr"
mkdir -p "$root/lib" "$root/include"

# Headers, pkg-config files and the unversioned .so links of the -dev packages.
for p in "${dev_packages[@]}"; do
  dpkg -L "$p" | while read -r f; do
    case "$f" in
      /usr/include/*) [ -f "$f" ] && install -D -m 644 "$f" "$root/include/${f#/usr/include/}" ;;
      "$arch_dir"/pkgconfig/*.pc) install -D -m 644 "$f" "$root/lib/pkgconfig/$(basename "$f")" ;;
      "$arch_dir"/*.so) [ -L "$f" ] && cp -P "$f" "$root/lib/" ;;
    esac
  done
done
# Gloo's headers: c10d's ProcessGroupGloo header includes them (LibTorch carries Gloo's code).
# Brotli's headers: httplib.h includes them.
dpkg -L libgloo-dev libbrotli-dev | while read -r f; do
  case "$f" in /usr/include/gloo/* | /usr/include/brotli/*) [ -f "$f" ] && install -D -m 644 "$f" "$root/include/${f#/usr/include/}" ;; esac
done
# Qt at its own paths: the libraries named above, the headers, CMake files, tools, mkspecs and the
# image-format plugins; not its other plugins and libraries (X11, EGL, input devices).
for p in "${qt_packages[@]}"; do
  dpkg -L "$p" | while read -r f; do
    [ -f "$f" ] || [ -L "$f" ] || continue
    case "$f" in
      "$arch_dir"/libQt6Core.so* | "$arch_dir"/libQt6Gui.so* | "$arch_dir"/libQt6DBus.so* | "$arch_dir"/libQt6Test.so* | \
        "$arch_dir"/cmake/* | "$arch_dir"/qt6/mkspecs/* | "$arch_dir"/qt6/plugins/imageformats/* | \
        /usr/include/* | /usr/lib/qt6/* | /usr/bin/*) ;;
      *) continue ;;
    esac
    mkdir -p "$stage$(dirname "$f")"
    cp -P "$f" "$stage$f"
  done
done
# The pkg-config files name /usr/lib/x86_64-linux-gnu; the host's pkg-config reads them with
# PKG_CONFIG_SYSROOT_DIR set to the unpacked folder, so only the library folder changes.
sed -i "s|^libdir=.*|libdir=\${prefix}/lib|" "$root"/lib/pkgconfig/*.pc
# cpp-httplib's file requires the .pc files of zlib and brotli even for a shared link, which a host
# may lack; its library names them itself.
sed -i 's|^Requires.private:.*|Requires.private: openssl >= 1.1.1|' "$root/lib/pkgconfig/cpp-httplib.pc"

# The symbol versions the carried libraries require of the library with soname $1.
required_versions() {
  for s in "${analysed[@]}"; do
    readelf -V "$arch_dir/$s" | awk -v file="$1" '/File:/ { inside = ($NF == file || $(NF - 2) == file) }
                                                  inside && /Name:/ { print $3 }'
  done | sort -u | tr '\n' ' '
}

needed_of() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

declare -A real=()
for s in "${real_sonames[@]}" "${qt_runtime_sonames[@]}"; do
  cp -L "$arch_dir/$s" "$root/lib/$s"
  real[$s]=1
done
for s in "${qt_sonames[@]}"; do real[$s]=1; done

# Libraries the carried ones need that are neither carried nor the system's: stubbed.
declare -A stub=()
for s in "${analysed[@]}"; do
  for n in $(needed_of "$arch_dir/$s"); do
    [[ -n "${real[$n]:-}" || "$n" =~ $system_re ]] && continue
    stub[$n]=1
  done
done

# Each carried library's undefined dynamic symbols, as NAME and NAME@VERSION.
undefined="$stage/undefined.txt"
for s in "${analysed[@]}"; do
  nm -D --undefined-only --with-symbol-versions "$arch_dir/$s" | awk '{print $2}'
done | sort -u > "$undefined"

stub_dir="$stage/stubs"
mkdir -p "$stub_dir"
for n in "${!stub[@]}"; do
  lib="$(readlink -f "$arch_dir/$n" 2>/dev/null || true)"
  [ -e "$lib" ] || lib="$(ldconfig -p | awk -v n="$n" '$1 == n {print $NF; exit}')"
  [ -e "$lib" ] || { say "cannot find $n to read its symbols"; exit 1; }
  asm="$stub_dir/$n.s"; vers="$stub_dir/$n.map"
  # The real library's defined symbols that a carried library imports: functions become traps,
  # objects zero-filled blocks of their real size, each under its version.
  nm -D --defined-only -S -t d --with-symbol-versions "$lib" |
    awk -v asm="$asm" -v vers="$vers" -v undefined="$undefined" -v required="$(required_versions "$n")" -v soname="$n" -v harmless_list="${harmless[*]}" '
      BEGIN { while ((getline u < undefined) > 0) { want[u] = 1; sub(/@.*/, "", u); want[u] = 1 }
              split(harmless_list, h, " "); for (i in h) harmless[h[i]] = 1 }
      { if (NF == 4) { size = $2; type = $3; sym = $4 } else if (NF == 3) { size = "8"; type = $2; sym = $3 } else next
        name = sym; version = ""
        if (index(sym, "@")) {
          # Old versions of a symbol (NAME@V, not the default NAME@@V) are not what new links use.
          if (!index(sym, "@@")) next
          name = substr(sym, 1, index(sym, "@") - 1); version = substr(sym, index(sym, "@")); gsub(/@/, "", version) }
        if (!(name in want) && !((name "@" version) in want)) next
        if (name in seen) next
        seen[name] = 1
        if (type ~ /^[TtWi]$/) {
          # A trap that first says which library was left out: "stub called: NAME (SONAME ...)".
          msg = "streetgan gpu-deps: " name " called, but " soname " is a stub (not carried)\\n"
          printf ".text\n.globl %s\n.type %s,@function\n%s:\n", name, name, name > asm
          if (name in harmless) printf "  xor %%eax, %%eax\n  ret\n", name > asm
          else {
            printf "  lea .Lm%d(%%rip), %%rsi\n  mov $%d, %%edx\n  mov $2, %%edi\n  mov $1, %%eax\n  syscall\n  ud2\n", NR, length(msg) - 1, NR > asm
            printf ".section .rodata\n.Lm%d: .ascii \"%s\"\n", NR, msg > asm }
        }
        else if (type ~ /^[DdBbRrVvu]$/) { bytes = size + 0; if (bytes <= 0) bytes = 8
          printf ".data\n.globl %s\n.type %s,@object\n.size %s,%d\n%s:\n  .zero %d\n", name, name, name, bytes, name, bytes > asm }
        else next
        list[version] = list[version] name "; " }
      END { printf "" > asm; printf "" > vers
            # Every version a carried library asks of this one must be defined, even if empty.
            n = split(required, req, " ")
            for (i = 1; i <= n; i++) if (!(req[i] in list)) list[req[i]] = ""
            first = 1
            for (v in list) if (v != "") {
              # Unversioned names go into the first named node: ld refuses an anonymous node
              # beside named ones; a versioned definition also satisfies an unversioned import.
              extra = first && ("" in list) ? list[""] : ""
              printf "%s { global: %s%s };\n", v, list[v], extra > vers; first = 0 } }'
  extra=()
  grep -q '^[^{]' "$vers" && extra=(-Wl,--version-script="$vers")
  gcc -shared -nostdlib -Wl,-soname,"$n" "${extra[@]}" -o "$root/lib/$n" -x assembler "$asm"
done

# The -dev packages' unversioned links name the full file (libavcodec.so.59.37.100); point them at
# the soname copied or stubbed above (libOpenGL.so: the stub, for Qt's CMake check).
for link in "$root"/lib/*.so; do
  [ -e "$link" ] && continue
  target="$(cd "$root/lib" && ls "$(basename "$link")".* 2>/dev/null | head -n 1 || true)"
  # libGL.so: nothing carried imports it, and CMake's OpenGL check takes libOpenGL and libGLX.
  [ -z "$target" ] && [ "$(basename "$link")" = libGL.so ] && { rm -f "$link"; continue; }
  [ -n "$target" ] || { say "no library for $(basename "$link")"; exit 1; }
  ln -sfn "$target" "$link"
done

{
  echo "StreetGAN GPU-host dependencies, packed $(date -u +%F) on $(. /etc/os-release; echo "$PRETTY_NAME")"
  echo "real: ${real_sonames[*]} ${qt_runtime_sonames[*]} ${qt_sonames[*]} (Qt at usr/lib/x86_64-linux-gnu)"
  echo "stubs (every function traps): ${!stub[*]}"
  echo "the host's own if it has one: ${host_preferred[*]}"
} > "$stage/usr/README.streetgan"

mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out.tmp" usr
mv "$out.tmp" "$out"
say "wrote $out ($(du -h "$out" | cut -f1); $(( ${#real_sonames[@]} + ${#qt_runtime_sonames[@]} + ${#qt_sonames[@]} )) libraries carried, ${#stub[@]} stubbed)"
