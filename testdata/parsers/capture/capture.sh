#!/usr/bin/env bash
# Re-captures the real ucx_perftest and iperf3 outputs used as parser fixtures.
# Runs every server and client inside a private network namespace (loopback
# only), so nothing listens on a shared address. Needs root (unshare -n) and
# Debian's ucx-utils and iperf3. Usage: capture.sh OUTDIR   (default: ..)
set -euo pipefail
out=$(cd "${1:-$(dirname "$0")/..}" && pwd)
mkdir -p "$out/ucx_perftest" "$out/iperf3"
export UCX_TLS=tcp
inns() { unshare -n bash -c 'ip link set lo up; '"$1"; }

# ucx_perftest: start the server, wait until it listens, run the client.
# $1 name, $2 port, $3... client arguments.
ucx() {
  local name=$1 port=$2; shift 2
  inns "
    timeout 60 ucx_perftest -p $port -c 0 > '$out/ucx_perftest/${name}_server.txt' 2>&1 &
    srv=\$!
    for i in \$(seq 100); do grep -q ':$(printf %04X "$port") 00000000:0000 0A' /proc/net/tcp && break; sleep 0.05; done
    timeout 60 ucx_perftest 127.0.0.1 -p $port -c 1 $* > '$out/ucx_perftest/${name}_client.txt' 2>&1 || echo \"client exit \$?\" >&2
    wait \$srv || echo \"server exit \$?\" >&2
  "
}
ucx tag_bw_64k 13337 -t tag_bw -s 65536 -n 20000
ucx tag_bw_64k_final 13338 -t tag_bw -s 65536 -n 20000 -f
ucx tag_bw_64k_csv 13339 -t tag_bw -s 65536 -n 20000 -v
ucx tag_lat_8 13340 -t tag_lat -s 8 -n 20000
# Long enough for progress lines; an unknown UCX_ variable gives a WARN line.
UCX_RDMABENCH_UNUSED=1 ucx tag_bw_64k_progress_warn 13341 -t tag_bw -s 65536 -n 100000
ucx stream_bw_1m_csv_progress 13342 -t stream_bw -s 1048576 -n 6000 -v
# Protocol tables (UCX_PROTO_INFO) name the transport that carried the data.
UCX_PROTO_ENABLE=y UCX_PROTO_INFO=y ucx tag_bw_1k_proto_info 13344 -t tag_bw -s 1024 -n 20000
# The client dies mid-run: the server sees the peer go away.
inns "
  timeout 5 ucx_perftest -p 13343 -c 0 > /dev/null 2>&1 &
  srv=\$!
  for i in \$(seq 100); do grep -q ':343F 00000000:0000 0A' /proc/net/tcp && break; sleep 0.05; done
  timeout -s KILL 1.5 ucx_perftest 127.0.0.1 -p 13343 -c 1 -t tag_bw -s 65536 -n 10000000 > '$out/ucx_perftest/peer_killed_client.txt' 2>&1 || echo \"client exit \$?\" >&2
  wait \$srv || echo \"server exit \$?\" >&2
"
# A client with no server: connect() refused.
inns "timeout 20 ucx_perftest 127.0.0.1 -p 13399 -t tag_bw -s 65536 -n 100 > '$out/ucx_perftest/connect_refused_client.txt' 2>&1; echo exit \$? >&2" || true

# iperf3 -J: a good run and a refused one.
inns "
  timeout 30 iperf3 -s -1 -J -B 127.0.0.1 -p 5201 > '$out/iperf3/tcp_p2_t2_server.json' 2>&1 &
  for i in \$(seq 100); do grep -q ':1451 00000000:0000 0A' /proc/net/tcp && break; sleep 0.05; done
  timeout 30 iperf3 -c 127.0.0.1 -p 5201 -t 2 -P 2 -J > '$out/iperf3/tcp_p2_t2.json' 2>&1 || true
  wait
  timeout 30 iperf3 -s -1 -B 127.0.0.1 -p 5202 > /dev/null 2>&1 &
  for i in \$(seq 100); do grep -q ':1452 00000000:0000 0A' /proc/net/tcp && break; sleep 0.05; done
  timeout 30 iperf3 -c 127.0.0.1 -p 5202 -t 2 > '$out/iperf3/tcp_t2_text.txt' 2>&1 || true
  wait
  timeout 30 iperf3 -c 127.0.0.1 -p 5299 -t 2 -J > '$out/iperf3/refused.json' 2>&1 || true
"
