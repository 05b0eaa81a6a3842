#!/bin/sh
# $pkgs and $need are word lists, split on purpose where they are passed on.
# shellcheck disable=SC2086
# fetch.sh DEBDIR [LIST]: downloads the packages of LIST (default
# packages.txt: the soft-RoCE VM's), their dependencies and the kernel
# (linux-image-amd64's versioned image) with apt-get download.
# Cached: a second run with every .deb present downloads nothing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
debs=$1
pkglist=${2:-$here/packages.txt}
# The kernel comes with the VM's own list only (a node list adds to a VM).
[ $# -ge 2 ] && kimg= || kimg=linux-image-amd64
mkdir -p "$debs"
pkgs=$(grep -v '^#' "$pkglist")
closure() {
  apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances $pkgs 2>/dev/null | grep -v '^ ' | grep -v '^<' | sort -u
}
# Without package lists apt still knows what is installed (dpkg's status), so
# the closure alone is no test: every package must be known to apt.
known() { for p in $pkgs $kimg; do apt-cache show "$p" >/dev/null 2>&1 || return 1; done; }
if ! known; then
  echo "fetch.sh: apt has no package lists (or stale ones); running apt-get update" >&2
  apt-get update -qq
fi
kernel_package() {
  [ -n "$kimg" ] || return 0
  apt-cache depends "$kimg" | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1
}
list=$(closure)
kernel=$(kernel_package)
[ -n "$kernel" ] || [ -z "$kimg" ] || { echo "fetch.sh: cannot resolve linux-image-amd64 (apt-get update?)" >&2; exit 1; }
cd "$debs"
need=
for p in $list $kernel; do
  ls "${p}_"*.deb >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  echo "fetch.sh: downloading$need" >&2
  # Lists older than the mirror name versions it no longer has (404): refresh
  # them once and resolve again. Download as root without the _apt sandbox
  # (the cache directory is ours, not _apt's).
  dl() { apt-get download -q=2 -o APT::Sandbox::User=root "$@"; }
  if ! dl $need; then
    echo "fetch.sh: download failed; running apt-get update and retrying" >&2
    apt-get update -qq
    kernel=$(kernel_package)
    need=
    for p in $(closure) $kernel; do
      ls "${p}_"*.deb >/dev/null 2>&1 || need="$need $p"
    done
    [ -z "$need" ] || dl $need
  fi
fi
[ -z "$kimg" ] || echo "$kernel" | sed 's/^linux-image-//' > kernel-version
