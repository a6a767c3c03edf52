# Shell functions of the scripts that make Debian trees (check-debs.sh, check-libtorch2.sh);
# sourced, not run.

# The mirror the host's apt sources name (deb822 .sources or one-line lists), not its security one.
host_mirror() {
  local uri
  uri="$(grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n 1 || true)"
  if [ -z "$uri" ]; then
    uri="$(grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
           awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' |
           grep -v security | head -n 1 || true)"
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

# Whether anything is mounted at folder $1 or below it.
mounted_under() { findmnt -rn -o TARGET | grep -q "^$1\(/\|\$\)"; }
