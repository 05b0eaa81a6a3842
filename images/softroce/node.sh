#!/bin/sh
# node.sh WORK KUBELET RDMAPLUGIN: builds the node disk WORK/node.img, an
# ext4 image (mke2fs -d, no mount, no root needed) that /init mounts at
# /node when the VM has it and that join.sh turns into a Kubernetes node:
#   bin/   kubelet (built from the control plane's k8s.io/kubernetes module),
#          containerd, containerd-shim-runc-v2, ctr, runc (Debian packages,
#          node-packages.txt) and the RDMA device plugin (rdmaplugin)
#   cni/   bridge, host-local, loopback (Debian's containernetworking-plugins)
#   lib/   libseccomp.so.2 (runc's one library the VM lacks)
#   state/ containerd's root: the VMs open the disk with snapshot=on, so
#          what they write is thrown away when QEMU exits
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(cd "$1" && pwd); kubelet=$2; plugin=$3
sh "$here/fetch.sh" "$work/node-debs" "$here/node-packages.txt"
root=$work/node-root; stage=$work/node-stage

# shellcheck disable=SC2012 # the names are Debian package files: ls lists them as they are
stamp=$(ls "$work/node-debs" | md5sum | cut -c1-16)
if [ "$(cat "$root/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$root"; mkdir -p "$root"
  for d in "$work"/node-debs/*.deb; do dpkg -x "$d" "$root"; done
  echo "$stamp" > "$root/.stamp"
fi

rm -rf "$stage"; mkdir -p "$stage/bin" "$stage/cni" "$stage/lib" "$stage/state"
for b in containerd containerd-shim-runc-v2 ctr runc; do cp "$root/usr/bin/$b" "$stage/bin/"; done
for p in bridge host-local loopback; do cp "$root/usr/lib/cni/$p" "$stage/cni/"; done
cp -L "$root/usr/lib/x86_64-linux-gnu/libseccomp.so.2" "$stage/lib/"
cp "$kubelet" "$stage/bin/kubelet"
cp "$plugin" "$stage/bin/rdmaplugin"
cp "$here/node/join.sh" "$here/node/leave.sh" "$here/node/containerd.toml" "$here/node/kubelet.yaml" "$stage/"
dpkg-deb -f "$work"/node-debs/containerd_*.deb Version > "$stage/containerd.version"
"$stage/bin/kubelet" --version > "$stage/kubelet.version"

# 2 GiB, sparse: the images' content and snapshots (about 400 MB) and the
# programs (about 250 MB) with room to spare.
rm -f "$work/node.img"
mke2fs -q -t ext4 -L rdmabench-node -E root_owner=0:0 -d "$stage" "$work/node.img" 2G
echo "node.sh: $work/node.img ($(du -h "$work/node.img" | cut -f1) used), $(cat "$stage/kubelet.version"), containerd $(cat "$stage/containerd.version")" >&2
