#!/bin/sh
# vms.sh up|down [WORK]: boot (or stop) the two soft-RoCE VMs by hand, as the
# lane's tests do: vm1 10.9.0.1 (ssh on 127.0.0.1:42201), vm2 10.9.0.2
# (127.0.0.1:42202), joined by a QEMU socket network on 127.0.0.1:42210; writes
# WORK/known_hosts for scenarios/softroce.yaml. WORK defaults to .work/softroce.
# Then: ./bin/rdmabench run scenarios/softroce.yaml
set -eu
W=${2:-.work/softroce}
case ${1:-} in
down)
  for n in 1 2; do [ -f "$W/vm$n.pid" ] && kill "$(cat "$W/vm$n.pid")" 2>/dev/null; rm -f "$W/vm$n.pid"; done
  exit 0 ;;
up) ;;
*) echo "usage: $0 up|down [WORK]" >&2; exit 2 ;;
esac
[ -f "$W/initrd.gz" ] || { echo "no image in $W: run make -C images softroce" >&2; exit 1; }
K=$(cat "$W/known_host_key.pub")
printf '[127.0.0.1]:42201 %s\n[127.0.0.1]:42202 %s\n' "$K" "$K" > "$W/known_hosts"
boot() { # n sockopt
  setsid qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -nographic -no-reboot \
    -kernel "$W/vmlinuz" -initrd "$W/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 rdmabench.name=vm$1 rdmabench.ip=10.9.0.$1" \
    -netdev "socket,id=d0,$2" -device "virtio-net-pci,netdev=d0,mac=52:54:00:09:00:0$1,romfile=" \
    -netdev "user,id=m0,hostfwd=tcp:127.0.0.1:4220$1-:22" \
    -device "virtio-net-pci,netdev=m0,mac=52:54:00:02:00:0$1,romfile=" \
    > "$W/vm$1.console" 2>&1 < /dev/null &
  echo $! > "$W/vm$1.pid"
}
boot 1 listen=127.0.0.1:42210
sleep 1
boot 2 connect=127.0.0.1:42210
i=0
until grep -q ready "$W/vm1.console" && grep -q ready "$W/vm2.console"; do
  i=$((i+1)); [ $i -lt 300 ] || { echo "VMs did not boot; see $W/vm*.console" >&2; exit 1; }
  sleep 1
done
echo "vm1 and vm2 up in about ${i}s (consoles: $W/vm1.console, $W/vm2.console)"
