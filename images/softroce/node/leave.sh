#!/bin/sh
# leave.sh: undoes join.sh (kubeadm reset's part on the node): stops the
# kubelet and the RDMA device plugin, removes any container still in
# containerd (there should be none: the lane deletes its pods through the
# API first, and says so when one is left), stops containerd, then removes
# the pod network, the mounts and cgroups the node made and its run state.
# The imported images stay on the node disk until the VM stops.
# Exit 1 when a container had to be removed here.
set -u
export PATH=/node/bin:/usr/sbin:/usr/bin:/sbin:/bin
IP=/sbin/ip
run=/run/rdmabench-node
[ -d "$run" ] || { echo "leave: not a node (no $run)"; exit 0; }
# stop NAME: SIGTERM, then SIGKILL after 10 s.
stop() {
  pid=$(cat "$run/$1.pid" 2>/dev/null) || return 0
  kill "$pid" 2>/dev/null || return 0
  i=0
  while kill -0 "$pid" 2>/dev/null; do
    i=$((i + 1)); [ $i -le 100 ] || { kill -9 "$pid" 2>/dev/null; break; }
    sleep 0.1
  done
}
stop kubelet
stop rdmaplugin
status=0
left=$(ctr -n k8s.io containers ls -q 2>/dev/null)
if [ -n "$left" ]; then
  echo "leave: containers left in containerd: $(echo "$left" | tr '\n' ' ')"
  status=1
  for c in $left; do ctr -n k8s.io tasks kill -s SIGKILL "$c" >/dev/null 2>&1; done
  sleep 1
  for c in $left; do ctr -n k8s.io tasks rm -f "$c" >/dev/null 2>&1; ctr -n k8s.io containers rm "$c" >/dev/null 2>&1; done
fi
stop containerd
# Mounts the runtime and the kubelet made, deepest first.
awk '$2 ~ "^(/run/containerd|/run/netns|/var/lib/kubelet|/node/state)" {print $2}' /proc/mounts | sort -r |
  while read -r m; do umount -l "$m" 2>/dev/null; done
for ns in /run/netns/*; do [ -e "$ns" ] && rm -f "$ns"; done
$IP link del cni0 2>/dev/null
$IP route show | awk '/^10\.244\./ {print $1}' | while read -r r; do $IP route del "$r"; done
# The kubelet's cgroups (kubepods…), children before parents.
find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sort -r | while read -r d; do rmdir "$d" 2>/dev/null; done
rm -rf /var/lib/kubelet /var/lib/cni /etc/cni/net.d /run/containerd "$run"
echo "leave: done"
exit $status
