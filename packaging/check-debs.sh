#!/usr/bin/env bash
# Builds the Debian packages from a build folder (cpack), validates them (desktop-file-validate,
# appstreamcli validate --no-net, lintian: no errors), then installs them with apt into a clean
# Debian bookworm tree made with debootstrap and runs there, from the installed paths only:
# `streetgan --version`, a 1-epoch demo training and `streetgan-studio --screenshot` offscreen.
# A runtime dependency missing from the packages fails here.
#
#   bash packaging/check-debs.sh [BUILD_DIR]          (default: build; as root)
#   bash packaging/check-debs.sh --prepare            only the pristine tree (the download): .ci/run
#                                                     makes it in the background while it builds
#
# The pristine tree is debootstrapped once into /var/cache/streetgan/bookworm-pristine and
# copied afresh for every check.
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir="$(pwd)"
cache=/var/cache/streetgan
pristine="$cache/bookworm-pristine"
tree="$cache/bookworm-debs"
say() { echo "check-debs: $*"; }
fail() { echo "check-debs: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "must run as root (it calls apt-get, debootstrap, mount and chroot)"

# host_mirror, mounted_under
source packaging/tree-helpers.sh
# The pristine tree, debootstrapped once; under its own lock, as a --prepare may be making it.
make_pristine() {
  mkdir -p "$cache"
  exec 8>"$pristine.lock"
  flock 8
  if [ ! -f "$pristine/.complete" ]; then
    command -v debootstrap >/dev/null || fail "debootstrap is not installed (apt-get install debootstrap)"
    say "debootstrap bookworm (minbase) into $pristine"
    rm -rf "$pristine"
    debootstrap --variant=minbase bookworm "$pristine" "$(host_mirror)" >/dev/null || fail "debootstrap failed"
    touch "$pristine/.complete"
  fi
  exec 8>&-
}
if [ "${1:-}" = --prepare ]; then
  make_pristine
  say "the pristine bookworm tree in $pristine is ready"
  exit 0
fi
build_dir="$(realpath "${1:-build}")"
[ -f "$build_dir/CMakeCache.txt" ] || fail "$build_dir is not a configured build folder"
for tool in cpack:cmake desktop-file-validate:desktop-file-utils appstreamcli:appstream lintian:lintian \
            debootstrap:debootstrap dpkg-shlibdeps:dpkg-dev; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
if [ -n "${missing[*]:-}" ]; then
  say "installing ${missing[*]} on the host"
  bash packaging/apt-install.sh "${missing[@]}" >/dev/null
fi

# 1. The packages.
rm -rf "$build_dir/debs"
(cd "$build_dir" && cpack -G DEB -B "$build_dir/debs" >/dev/null) || fail "cpack failed"
mapfile -t debs < <(find "$build_dir/debs" -maxdepth 1 -name '*.deb' | sort)
[ "${#debs[@]}" -eq 2 ] || fail "expected 2 packages in $build_dir/debs, found ${#debs[@]}"
for deb in "${debs[@]}"; do
  say "$(basename "$deb"): $(du -h "$deb" | cut -f1)"
  dpkg-deb -f "$deb" Package Version Depends Recommends | sed 's/^/  /'
done

# 2. Validation.
desktop-file-validate packaging/org.streetgan.Studio.desktop || fail "desktop-file-validate failed"
appstreamcli validate --no-net packaging/org.streetgan.Studio.metainfo.xml || fail "appstreamcli validate failed"
for deb in "${debs[@]}"; do
  say "lintian $(basename "$deb")"
  lintian --fail-on error "$deb" || fail "lintian reports errors in $deb"
done

# 3. A clean bookworm tree, with the packages installed by apt from the mirror.
mounts=()
cleanup() {
  local proc i
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null || true)" = "$tree" ] && kill -KILL "${proc#/proc/}" 2>/dev/null || true
  done
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount -R "${mounts[$i]}" 2>/dev/null || umount -R -l "${mounts[$i]}" 2>/dev/null || true
  done
}
trap cleanup EXIT
mkdir -p "$cache"
exec 9>"$tree.lock"
flock -n 9 || fail "another check is using $tree"
make_pristine
# A check that was killed may have left its tree's /dev bound: never delete through a mount.
mounted_under "$tree" && fail "$tree has something mounted in it; unmount it first"
rm -rf --one-file-system "$tree"
cp -a "$pristine" "$tree"
mount -t proc proc "$tree/proc"; mounts+=("$tree/proc")
mount --rbind /dev "$tree/dev"; mount --make-rslave "$tree/dev"; mounts+=("$tree/dev")
in_tree() {
  chroot "$tree" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive "$@"
}
mkdir -p "$tree/tmp/debs"
cp "${debs[@]}" "$tree/tmp/debs/"
say "apt-get install the packages into the clean tree"
in_tree apt-get update -qq
in_tree apt-get install -y -qq "${debs[@]/#$build_dir\/debs/\/tmp\/debs}" >/dev/null ||
  fail "apt-get could not install the packages"

# 4. The installed programs.
version="$(in_tree streetgan --version)"
say "installed: $version; $(in_tree sh -c 'ls /usr/bin/streetgan*' | tr '\n' ' ')"
# The demo's 1,000 scenes and one epoch of the demo preset, into the runs folder the studio lists.
run=/root/StreetGAN/runs/demo-installed
in_tree streetgan demo-data --out /tmp/demo --cities 4 --sequences 10 --frames 25 >/dev/null 2>&1 ||
  fail "streetgan demo-data failed in the tree"
in_tree streetgan train --dataroot /tmp/demo --preset demo --epochs 1 --run-dir "$run" >/dev/null 2>/tmp/check-debs-train.err ||
  fail "a 1-epoch demo training failed in the tree: $(tail -n 3 /tmp/check-debs-train.err)"
grep -q '"status":"completed"' "$tree$run/events.jsonl" || fail "the demo training did not complete"
say "1-epoch demo training: $(grep -c '"type":"step"' "$tree$run/events.jsonl") steps, completed"
in_tree env QT_QPA_PLATFORM=offscreen streetgan-studio --tab runs --screenshot /tmp/studio.png --after 3 >/dev/null 2>&1 ||
  fail "streetgan-studio --screenshot failed in the tree"
mkdir -p "$build_dir/tests/output"
cp "$tree/tmp/studio.png" "$build_dir/tests/output/installed-studio.png"
say "studio screenshot from the installed package: $build_dir/tests/output/installed-studio.png"
test -f "$tree/usr/share/applications/org.streetgan.Studio.desktop" || fail "the desktop entry is not installed"
test -f "$tree/usr/share/man/man1/streetgan.1.gz" || fail "the man page is not installed"
# The bash completion loads in bash (without the bash-completion package) and completes a command.
completed="$(in_tree bash -c 'source /usr/share/bash-completion/completions/streetgan && COMP_WORDS=(streetgan tr) &&
  COMP_CWORD=1 && _streetgan && echo "${COMPREPLY[*]}"')" || fail "the bash completion does not load in the tree"
[ "$completed" = train ] || fail "the bash completion completed 'streetgan tr' to '$completed', not 'train'"
say "bash completion: streetgan tr -> $completed"
say "all passed"
