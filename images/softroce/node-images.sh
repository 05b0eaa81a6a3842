#!/bin/sh
# node-images.sh TOOLS_OCI OUT: the images the VM nodes' containerd imports
# (no registry), as one OCI archive OUT made from the tools image's
# archive (make image) with umoci, its layers stored uncompressed:
#   lane      the tools image less what the lane never runs (below), as
#             one layer (also the pods' sandbox image: its command is
#             `sleep infinity`, and registry.k8s.io/pause cannot be
#             pulled here)
#   no-rping  the same with a layer that deletes rping (/usr/bin/rping and
#             the bundle's, which the pod's init container copies from this
#             image too): the lane's "image that lacks a tool"
# containerd unpacks and digests every byte under CPU emulation in the VMs
# (about 1 s per MB on a 2-core host, the bulk of join.sh), so the lane's
# image keeps only what its tests run: perftest, rping, ucx_perftest, the
# verbs providers, iproute2, procps, the shell's tools and rdmabench's
# bundle (its init container copies it). Left out (about 220 MB of 400):
# rdmabench's GPU programs (rdmabench-nccl, -nixl, -deepep; the lane runs
# no GPU tool), /usr/local/bin/rdmabench (a link to the bundle's copy),
# Open MPI and what only it needs (PMIx, hwloc's XML and ICU, libfabric),
# sshd, Perl's modules, iconv's modules and udev's hardware database.
# Every program the lane runs is then checked to find all its libraries.
set -eu
tools=$1; out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/layout"
tar -C "$tmp/layout" -xf "$tools"
tag=$(umoci ls --layout "$tmp/layout" | head -n 1)
[ -n "$tag" ] || { echo "node-images.sh: $tools holds no tagged image" >&2; exit 1; }

root=$tmp/root
umoci raw unpack --image "$tmp/layout:$tag" "$root"
before=$(du -sm "$root" | cut -f1)
lib=usr/lib/x86_64-linux-gnu
(cd "$root" && rm -rf usr/local/bin/rdmabench-* opt/rdmabench/bin/rdmabench-* usr/local/bin/rdmabench \
  usr/share/perl usr/lib/x86_64-linux-gnu/perl "$lib"/gconv usr/lib/udev/hwdb.bin usr/lib/udev/hwdb.d \
  "$lib"/openmpi "$lib"/pmix2 "$lib"/libmpi* "$lib"/liboshmem* "$lib"/libopen-* "$lib"/libpmix* \
  "$lib"/libicu* "$lib"/libxml2* "$lib"/libhwloc* "$lib"/libfabric* usr/share/openmpi usr/bin/mpi* usr/bin/orte* \
  usr/lib/openssh usr/sbin/sshd)
ln -s /opt/rdmabench/bin/rdmabench "$root/usr/local/bin/rdmabench"
# What the lane runs (and preflight reads with), each with all its libraries.
# shellcheck disable=SC2016 # expanded by the image's shell
missing=$(chroot "$root" sh -c 'for b in /usr/bin/ucx_perftest /usr/bin/ucx_info '"$lib"'/ucx/libuct_*.so.0 \
    /usr/bin/ibv_devinfo /usr/bin/ib_write_bw /usr/bin/ib_read_lat /usr/bin/rping /usr/bin/rdma /bin/ip /bin/ps \
    /usr/bin/timeout /usr/bin/awk /bin/sed /bin/grep /bin/sh /opt/rdmabench/libexec/*; do
    [ -e "$b" ] || { echo "$b: missing"; continue; }
    ldd "$b" 2>&1 | sed -n "s|^|$b: |; /not found/p"
  done')
[ -z "$missing" ] || { echo "node-images.sh: the lane image lacks what its programs need:" >&2; echo "$missing" >&2; exit 1; }
[ -x "$root/opt/rdmabench/bin/rdmabench" ] || { echo "node-images.sh: no rdmabench bundle in $tools" >&2; exit 1; }
after=$(du -sm "$root" | cut -f1)

slim=$tmp/slim
umoci init --layout "$slim"
umoci new --image "$slim:lane"
tar -C "$root" --numeric-owner -cf "$tmp/root.tar" .
umoci raw add-layer --image "$slim:lane" \
  --history.created_by "rdmabench images/softroce/node-images.sh: the tools image ($tag) less what the lane never runs" "$tmp/root.tar"
umoci config --image "$slim:lane" --os linux --architecture amd64 \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --config.cmd sleep --config.cmd infinity \
  --config.label "org.opencontainers.image.title=rdmabench-tools (soft-RoCE node lane)"
rm -rf "$root" "$tmp/root.tar" "$tmp/layout"
# OCI whiteouts: a layer holding usr/bin/.wh.rping removes usr/bin/rping.
for d in usr/bin opt/rdmabench/bin opt/rdmabench/libexec; do
  mkdir -p "$tmp/wh/$d"
  : > "$tmp/wh/$d/.wh.rping"
done
tar -C "$tmp/wh" --owner=0 --group=0 --numeric-owner -cf "$tmp/wh.tar" usr opt
umoci raw add-layer --image "$slim:lane" --tag no-rping \
  --history.created_by "rdmabench images/softroce/node-images.sh: remove rping" "$tmp/wh.tar"
umoci gc --layout "$slim"
# Uncompressed layers: containerd unpacks them under CPU emulation in the
# VMs, where gunzip costs most of the import (ocigunzip says more).
(cd "$(dirname "$0")/../.." && ${GO:-go} run ./images/ocigunzip "$slim")
tar -C "$slim" -cf "$out.tmp" .
mv "$out.tmp" "$out"
echo "node-images.sh: $out ($(du -h "$out" | cut -f1); the tools image's root $before MB, the lane's $after MB): $(umoci ls --layout "$slim" | tr '\n' ' ')" >&2
