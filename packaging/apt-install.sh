#!/usr/bin/env bash
# Installs the named Debian packages on the host that are not installed yet (as root), one apt-get
# at a time: the scripts that call it may run side by side (.ci/run runs check-debs.sh beside
# fuzz.sh), and two apt-gets at once would fail on dpkg's lock.
#   bash packaging/apt-install.sh PACKAGE...
set -euo pipefail
[ "$(id -u)" -eq 0 ] || { echo "apt-install.sh: must run as root (it calls apt-get)" >&2; exit 1; }
[ "$#" -gt 0 ] || exit 0
mkdir -p /var/cache/streetgan
exec 7>/var/cache/streetgan/apt.lock
flock 7
missing=()
for p in "$@"; do
  # shellcheck disable=SC2016  # ${Status} is dpkg-query's field, not the shell's
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -gt 0 ] || exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
