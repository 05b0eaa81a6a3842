#!/bin/sh
# build.sh OUTDIR RDMABENCH [PROGRAM...]: builds the tools image (images/tools)
# as an OCI image archive without a daemon or a registry:
#   1. mmdebstrap installs packages.txt (and their dependencies, no
#      recommends) from the pinned Debian suite into a tarball, copies the
#      static rdmabench and rdmabench's other programs (the NCCL probe,
#      rdmabench-nccl) to /usr/local/bin, makes the RDMA tool bundle a pod's
#      init container copies into any image (bundle.sh: /opt/rdmabench) and
#      records `dpkg-query` of every installed package;
#   2. umoci writes an OCI image layout with that tarball as its one layer,
#      the labels (org.opencontainers.image.*, io.rdmabench.packages) and
#      the config (PATH, entrypoint-less: the pods name their command);
#   3. the layout is archived as OUTDIR/rdmabench-tools.oci.tar, with
#      OUTDIR/packages.txt (package=version, one per line) beside it.
# .debs are cached in OUTDIR/apt-cache: a rebuild downloads nothing.
# Environment: SUITE (default bookworm), MIRROR (default deb.debian.org),
# SNAPSHOT (a snapshot.debian.org timestamp such as 20250520T000000Z: pins the
# archive itself, when that host is reachable), TAG (default latest), ARCH
# (Debian's name: amd64 by default, arm64 for GB200/GH200 nodes; a foreign
# one needs qemu-user-static and binfmt on the host, as mmdebstrap runs the
# target's maintainer scripts; the archive is then rdmabench-tools-ARCH.oci.tar
# and the programs given must be built for it: GOARCH=arm64).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
bin=$2
shift 2
extra="$*"
SUITE=${SUITE:-bookworm}
TAG=${TAG:-latest}
ARCH=${ARCH:-amd64}
case "$ARCH" in amd64|arm64) ;; *) echo "build.sh: ARCH is amd64 or arm64, not $ARCH" >&2; exit 1;; esac
name=rdmabench-tools
[ "$ARCH" = amd64 ] || name=rdmabench-tools-$ARCH
if [ -n "${SNAPSHOT:-}" ]; then
  mirror="http://snapshot.debian.org/archive/debian/$SNAPSHOT"
else
  mirror=${MIRROR:-http://deb.debian.org/debian}
fi
pkgs=$(sed 's/#.*//' "$here/packages.txt" | tr -s ' \t' '\n' | grep -v '^$')
for t in mmdebstrap umoci; do
  command -v $t >/dev/null || { echo "build.sh: $t is missing (./.ci/setup --tests installs it)" >&2; exit 1; }
done
# Every listed package must exist in the suite: apt would otherwise pick a
# virtual provider or fail late. apt-cache answers from the host's lists of
# the same suite (./.ci/setup --tests runs apt-get update); mmdebstrap then fails
# anyway on a name its own lists lack.
missing=
for p in $pkgs; do
  apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "build.sh: Debian $SUITE has no package(s):$missing (packages.txt)" >&2
  exit 1
fi
cache=$out/apt-cache
work=$out/build
rm -rf "$work"; mkdir -p "$cache" "$work"
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH="$epoch"
t0=$(date +%s)
# --variant=essential: Essential:yes packages plus the list and their Depends (no apt, no recommends).
# The single-quoted hooks are expanded by mmdebstrap's shell ("$1" is the
# root being built); $pkgs is a word list, split on purpose.
# shellcheck disable=SC2016,SC2086
mmdebstrap --quiet --variant=essential --mode=root --format=tar --architectures="$ARCH" \
  --include="$(echo $pkgs | tr ' ' ,)" \
  --aptopt='APT::Install-Recommends "false"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --skip=essential/unlink \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --setup-hook="sync-in $cache /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives $cache" \
  --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
  --customize-hook="copy-in $bin $extra /usr/local/bin/" \
  --customize-hook='chmod 0755 "$1"/usr/local/bin/rdmabench*' \
  --customize-hook='mkdir -p "$1"/run/sshd' \
  --customize-hook="sh $here/bundle.sh \"\$1\"" \
  --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
  --customize-hook="chroot \"\$1\" dpkg-query -W -f '\${Package}=\${Version}\n' > $work/packages.txt" \
  "$SUITE" "$work/rootfs.tar" "deb $mirror $SUITE main"
t1=$(date +%s)
sort -o "$work/packages.txt" "$work/packages.txt"
# Fail when a listed package did not end up installed.
for p in $pkgs; do
  grep -q "^$p=" "$work/packages.txt" || { echo "build.sh: $p not installed" >&2; exit 1; }
done
# The labels: the listed packages with their versions (the full list is in
# packages.txt beside the archive and /usr/local/share/rdmabench/packages.txt
# is not added: the layer is already closed).
listed=$(for p in $pkgs; do grep "^$p=" "$work/packages.txt"; done | tr '\n' ' ' | sed 's/ $//')
version=$("$bin" version 2>/dev/null | head -1 | awk '{print $NF}' || true)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
layout=$work/layout
umoci init --layout "$layout"
umoci new --image "$layout:$TAG"
umoci raw add-layer --image "$layout:$TAG" --history.created "$created" \
  --history.created_by "images/tools/build.sh: mmdebstrap $SUITE + rdmabench" "$work/rootfs.tar"
umoci config --image "$layout:$TAG" --created "$created" \
  --author rdmabench --os linux --architecture "$ARCH" \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.cmd sleep --config.cmd infinity \
  --config.label "org.opencontainers.image.title=rdmabench-tools" \
  --config.label "org.opencontainers.image.description=RDMA and network benchmark tools for rdmabench (perftest, rping, ucx_perftest, iperf3, Open MPI, sshd) on Debian $SUITE" \
  --config.label "org.opencontainers.image.source=https://github.com/rdmabench/rdmabench" \
  --config.label "org.opencontainers.image.version=${version:-dev}" \
  --config.label "org.opencontainers.image.created=$created" \
  --config.label "org.opencontainers.image.base.name=debian:$SUITE" \
  --config.label "io.rdmabench.debian.suite=$SUITE" \
  --config.label "io.rdmabench.debian.mirror=$mirror" \
  --config.label "io.rdmabench.packages=$listed" \
  --manifest.annotation "org.opencontainers.image.ref.name=$TAG"
umoci gc --layout "$layout"
rm -f "$out/$name.oci.tar"
tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$layout" -cf "$out/$name.oci.tar.tmp" .
mv "$out/$name.oci.tar.tmp" "$out/$name.oci.tar"
pk=packages.txt
[ "$ARCH" = amd64 ] || pk=packages-$ARCH.txt
mv "$work/packages.txt" "$out/$pk"
rm -rf "$work"
t2=$(date +%s)
size=$(du -m "$out/$name.oci.tar" | cut -f1)
echo "build.sh: $out/$name.oci.tar ($ARCH, ${size} MB; mmdebstrap $((t1 - t0)) s, layout $((t2 - t1)) s; $(wc -l < "$out/$pk") packages)" >&2
