#!/bin/sh
# Writes the two hand-made trees (cx7-roce-gpu, ib-ndr): the files a real
# ConnectX-7 host exposes, with the values such hosts show. They are not
# recordings (no such host was at hand); the rxe tree is a real recording
# from the soft-RoCE VMs (docs/development/softroce.md). Run from this directory.
set -eu
w() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" > "$1"; }

# mlxdev TREE DEV PCI NUMA SPEED WIDTH NETDEV DEVPORT
mlxdev() {
  d=$1/sys/class/infiniband/$2
  w "$d/node_type" "1: CA"; w "$d/fw_ver" "28.39.1002"
  w "$d/device/uevent" "DRIVER=mlx5_core
PCI_CLASS=20000
PCI_ID=15B3:1021
PCI_SUBSYS_ID=15B3:0041
PCI_SLOT_NAME=$3
MODALIAS=pci:v000015B3d00001021sv000015B3sd00000041bc02sc00i00"
  w "$d/device/numa_node" "$4"
  w "$d/device/current_link_speed" "$5"; w "$d/device/current_link_width" "$6"
  w "$d/device/net/$7/dev_port" "$8"; w "$d/device/net/$7/dev_id" 0x0
}

# roceport TREE DEV MAC-SUFFIX IPHEX NETDEV MTU
roceport() {
  p=$1/sys/class/infiniband/$2/ports/1
  w "$p/state" "4: ACTIVE"; w "$p/phys_state" "5: LinkUp"; w "$p/link_layer" Ethernet
  w "$p/rate" "400 Gb/sec (4X NDR)"
  for i in 0 1; do w "$p/gids/$i" "fe80:0000:0000:0000:$3"; done
  for i in 2 3; do w "$p/gids/$i" "0000:0000:0000:0000:0000:ffff:$4"; done
  for i in 4 5 6 7; do w "$p/gids/$i" "0000:0000:0000:0000:0000:0000:0000:0000"; done
  for i in 0 2; do w "$p/gid_attrs/types/$i" "IB/RoCE v1"; done
  for i in 1 3; do w "$p/gid_attrs/types/$i" "RoCE v2"; done
  for i in 0 1 2 3; do w "$p/gid_attrs/ndevs/$i" "$5"; done
  w "$1/sys/class/net/$5/mtu" "$6"
}

t=cx7-roce-gpu; rm -rf "$t"
mlxdev "$t" mlx5_0 0000:1a:00.0 0 "32.0 GT/s PCIe" 16 ens1f0np0 0
roceport "$t" mlx5_0 "a288:c2ff:fe3a:1b2c" "c0a8:0a0b" ens1f0np0 9000
# mlx5_1 trained at Gen4: its PCIe link, not the port, is the ceiling.
mlxdev "$t" mlx5_1 0000:9a:00.0 1 "16.0 GT/s PCIe" 16 ens2f0np0 0
roceport "$t" mlx5_1 "a288:c2ff:fe3a:2d40" "c0a8:0b0b" ens2f0np0 4200
cp ../topo-cx7.txt $t/nvidia-smi-topo-m.txt

t=ib-ndr; rm -rf "$t"
mlxdev "$t" mlx5_0 0000:0c:00.0 0 "32.0 GT/s PCIe" 16 ib0 0
p=$t/sys/class/infiniband/mlx5_0/ports/1
w "$p/state" "4: ACTIVE"; w "$p/phys_state" "5: LinkUp"; w "$p/link_layer" InfiniBand
w "$p/rate" "400 Gb/sec (4X NDR)"; w "$p/gids/0" "fe80:0000:0000:0000:b83f:d203:0012:34a0"
w "$p/gids/1" "0000:0000:0000:0000:0000:0000:0000:0000"; w "$p/gid_attrs/types/0" "IB/RoCE v1"
w "$t/sys/class/net/ib0/mtu" 4092
mlxdev "$t" mlx5_1 0000:8c:00.0 1 "32.0 GT/s PCIe" 16 ib1 0
p=$t/sys/class/infiniband/mlx5_1/ports/1
w "$p/state" "1: DOWN"; w "$p/phys_state" "3: Disabled"; w "$p/link_layer" InfiniBand
w "$p/rate" "10 Gb/sec (4X SDR)"; w "$p/gids/0" "fe80:0000:0000:0000:b83f:d203:0012:34a1"
w "$t/sys/class/net/ib1/mtu" 4092
