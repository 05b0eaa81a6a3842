#!/bin/sh
# join.sh: makes this soft-RoCE VM a Kubernetes node (kubeadm join's part
# on the node, for a VM with no systemd). Run as root inside the VM, from
# the node disk mounted at /node, after the control plane's files are in
# /etc/kubernetes (kubeconfig with the node's token, ca.crt, kubelet.crt
# and kubelet.key: the kubelet's serving certificate for NODE_IP).
#   NODE_NAME   the node's name (vm1)
#   NODE_IP     its address on the data network, where rxe0 lives (10.9.0.1)
#   POD_CIDR    this node's pod range for the CNI bridge (10.244.1.0/24)
#   ROUTES      other nodes' pod ranges: "10.244.2.0/24=10.9.0.2 …"
#   LABELS      node labels (a=b,c=d)
#   RDMA_SHARES how many pods may hold rdma/rxe at once (2)
# Starts containerd, the kubelet and the RDMA device plugin (each with its
# pid in /run/rdmabench-node, its log in /var/log), then imports
# /dev/vdb (node-images.oci.tar) into containerd. Prints one line per step
# with the seconds since it started. Every wait is bounded.
set -eu
: "${NODE_NAME:?}" "${NODE_IP:?}" "${POD_CIDR:?}"
ROUTES=${ROUTES:-}; LABELS=${LABELS:-}; RDMA_SHARES=${RDMA_SHARES:-2}
export PATH=/node/bin:/usr/sbin:/usr/bin:/sbin:/bin
IP=/sbin/ip   # iproute2's: busybox's applet would run otherwise
run=/run/rdmabench-node
t0=$(date +%s)
step() { echo "join: $(( $(date +%s) - t0 ))s $*"; }
# start NAME CMD...: runs CMD in a session of its own, logs to /var/log/NAME.log.
start() {
  n=$1; shift
  setsid "$@" > "/var/log/$n.log" 2>&1 < /dev/null &
  echo $! > "$run/$n.pid"
}
# waitfor WHAT SECONDS CMD...: polls CMD every second.
waitfor() {
  what=$1; bound=$2; shift 2; i=0
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -le "$bound" ] || { echo "join: $what not within ${bound}s" >&2; return 1; }
    sleep 1
  done
}
[ ! -d "$run" ] || { echo "join: $run exists: this VM is a node already (leave.sh first)" >&2; exit 1; }
[ ! -S /run/containerd/containerd.sock ] || { echo "join: a containerd already runs here" >&2; exit 1; }
for f in kubeconfig ca.crt kubelet.crt kubelet.key; do
  [ -s "/etc/kubernetes/$f" ] || { echo "join: /etc/kubernetes/$f is missing" >&2; exit 1; }
done
mkdir -p "$run" /var/lib/kubelet /etc/cni/net.d /var/log
: > /etc/kubernetes/resolv.conf
# hostNetwork pods get the node's resolv.conf (the VM resolves nothing).
[ -e /etc/resolv.conf ] || : > /etc/resolv.conf
[ -s /etc/machine-id ] || tr -d - < /proc/sys/kernel/random/uuid > /etc/machine-id
# runc's libseccomp, from the node disk.
ln -sf /node/lib/libseccomp.so.2 /usr/lib/x86_64-linux-gnu/libseccomp.so.2

# The pod network: a bridge on this node, other nodes' ranges through the
# data network (as a host-gw CNI would route them).
cat > /etc/cni/net.d/10-rdmabench.conflist <<CNI
{"cniVersion": "1.0.0", "name": "rdmabench-pods", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
CNI
for r in $ROUTES; do $IP route replace "${r%%=*}" via "${r#*=}"; done

start containerd containerd --config /node/containerd.toml
waitfor containerd 60 ctr version
step "containerd $(cat /node/containerd.version) up"
start kubelet kubelet --config=/node/kubelet.yaml --kubeconfig=/etc/kubernetes/kubeconfig \
  --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" --node-labels="$LABELS" --v=1
DATA=$($IP -o -4 addr show | awk -v ip="$NODE_IP" '$4 ~ "^" ip "/" {print $2; exit}')
[ -n "$DATA" ] || { echo "join: no netdev holds $NODE_IP" >&2; exit 1; }
waitfor "the kubelet's device-plugin socket" 60 test -S /var/lib/kubelet/device-plugins/kubelet.sock
start rdmaplugin rdmaplugin --netdev "$DATA" --resource rdma/rxe --shares "$RDMA_SHARES"
step "kubelet ($(cat /node/kubelet.version)) and rdmaplugin ($DATA) started"

# The images, from the archive QEMU attached as the second disk.
[ -b /dev/vdb ] || { echo "join: no /dev/vdb (node-images.oci.tar)" >&2; exit 1; }
ctr -n k8s.io images import --base-name localhost/rdmabench/tools /dev/vdb
step "images imported: $(ctr -n k8s.io images ls -q | grep -v '^sha256:' | tr '\n' ' ')"
