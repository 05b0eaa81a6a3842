#!/bin/sh
# build.sh WORK RDMABENCH: builds the soft-RoCE VM image under WORK from
# Debian packages (fetched by fetch.sh into WORK/debs) and the rdmabench
# binary: WORK/vmlinuz, WORK/initrd.gz, the VMs' host key
# (WORK/known_host_key.pub) and the client key (WORK/id_ed25519).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(cd "$1" && pwd); bench=$2
sh "$here/fetch.sh" "$work/debs"
V=$(cat "$work/debs/kernel-version")
root=$work/root; img=$work/initrd

# 1. Unpack every package (once per set of .debs).
# shellcheck disable=SC2012 # the names are Debian package files: ls lists them as they are
stamp=$(ls "$work/debs" | md5sum | cut -c1-16)
if [ "$(cat "$root/.stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$root"; mkdir -p "$root"
  for d in "$work"/debs/*.deb; do dpkg -x "$d" "$root"; done
  depmod -b "$root" "$V"
  echo "$stamp" > "$root/.stamp"
fi

rm -rf "$img"; mkdir -p "$img"
cd "$img"
mkdir -p bin sbin usr/bin usr/sbin etc/dropbear root/.ssh proc sys dev tmp run lib/modules
# 2. Kernel modules in load order (modprobe --show-depends on the tree).
: > etc/rdmabench-modules
# virtio_blk, ext4: the node disk; overlay, bridge, veth: containerd's
# snapshots and the CNI bridge of the VMs as Kubernetes nodes.
for m in crc32_generic virtio_pci virtio_net rdma_rxe rdma_ucm ib_uverbs virtio_blk ext4 overlay bridge veth; do
  modprobe -d "$root" -S "$V" --show-depends "$m" | sed -n "s#^insmod $root/lib/modules/##p" | sed 's/ *$//'
done | awk '!seen[$0]++' | while read -r ko; do
  mkdir -p "lib/modules/$(dirname "$ko")"; cp "$root/lib/modules/$ko" "lib/modules/$ko"; echo "$ko" >> etc/rdmabench-modules
done

# 3. Programs, the libraries they are loaded with, and dlopen()ed plugins.
cp "$root/bin/busybox" bin/busybox
for a in $(bin/busybox --list); do [ -e "bin/$a" ] || ln -s busybox "bin/$a"; done
progs="usr/bin/ib_write_bw usr/bin/ib_read_bw usr/bin/ib_send_bw usr/bin/ib_write_lat
usr/bin/ib_read_lat usr/bin/ib_send_lat usr/bin/rping usr/bin/ucx_perftest usr/bin/ucx_info
usr/bin/ibv_devices usr/bin/ibv_devinfo usr/bin/rdma sbin/ip usr/sbin/dropbear"
# The C and C++ runtime (libm, libpthread, libstdc++, libgcc_s) for programs
# copied in at run time: the real-nixlbench lane's NIXL build bundles every
# other library it needs.
plugins="$(cd "$root" && ls usr/lib/x86_64-linux-gnu/ucx/*.so.0 usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so)
lib/x86_64-linux-gnu/libgcc_s.so.1 usr/lib/x86_64-linux-gnu/libstdc++.so.6 lib/x86_64-linux-gnu/libm.so.6 lib/x86_64-linux-gnu/libpthread.so.0"
libpath=$root/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu:$root/usr/lib/x86_64-linux-gnu/ucx
for f in $progs $plugins; do
  mkdir -p "$(dirname "$f")"; cp -L "$root/$f" "$f"
  "$root/lib64/ld-linux-x86-64.so.2" --library-path "$libpath" --list "$root/$f" | sed -n "s#.*=> $root/\([^ ]*\) .*#\1#p"
done | sort -u | while read -r lib; do
  mkdir -p "$(dirname "$lib")"; cp -L "$root/$lib" "$lib"
done
mkdir -p lib64 lib/x86_64-linux-gnu etc/libibverbs.d
cp -L "$root/lib64/ld-linux-x86-64.so.2" lib64/
cp "$root/etc/libibverbs.d/rxe.driver" etc/libibverbs.d/
cp "$bench" usr/bin/rdmabench
# The VM's root is also the image of its pods as kube nodes (host/…): the
# pods' init container copies the bundle from /opt/rdmabench to
# /mnt/rdmabench-bundle (an emptyDir in an image's pod; the node agent runs
# a host pod's containers on the VM's own root), and their keep-alive is
# /opt/rdmabench/bin/rdmabench (runner/backend/kube).
mkdir -p opt/rdmabench/bin mnt/rdmabench-bundle && ln -sf /usr/bin/rdmabench opt/rdmabench/bin/rdmabench

# 4. Users, keys, init.
echo 'root:x:0:0:root:/root:/bin/sh' > etc/passwd
echo 'root:x:0:' > etc/group
echo /bin/sh > etc/shells
printf '127.0.0.1 localhost\n10.9.0.1 vm1\n10.9.0.2 vm2\n' > etc/hosts
run_root() { "$root/lib64/ld-linux-x86-64.so.2" --library-path "$libpath" "$@"; }
[ -f "$work/dropbear_ed25519_host_key" ] || run_root "$root/usr/bin/dropbearkey" -t ed25519 -f "$work/dropbear_ed25519_host_key" >/dev/null
run_root "$root/usr/bin/dropbearkey" -y -f "$work/dropbear_ed25519_host_key" | grep '^ssh-' | cut -d' ' -f1,2 > "$work/known_host_key.pub"
cp "$work/dropbear_ed25519_host_key" etc/dropbear/
[ -f "$work/id_ed25519" ] || (cd "$here/../.." && ${GO:-go} run ./images/keygen "$work/id_ed25519")
cp "$work/id_ed25519.pub" root/.ssh/authorized_keys
chmod 700 root root/.ssh; chmod 600 root/.ssh/authorized_keys
cp "$here/init" init; chmod 755 init

# 5. Pack.
find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet | gzip -1 > "$work/initrd.gz"
cp "$root/boot/vmlinuz-$V" "$work/vmlinuz"
echo "build.sh: $work/initrd.gz ($(du -h "$work/initrd.gz" | cut -f1)), kernel $V" >&2
