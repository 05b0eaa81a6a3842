#!/bin/bash
# Builds nccl-tests (a0b82b2, 2.19.6) against the image's NCCL wheel and captures outputs for rdmabench testdata.
# Run from an nccl-tests source tree on a GPU machine. GPUS lists the -g values to sweep; the largest
# must be the machine's GPU count: GPUS="2 4" on the 4-GPU machine (h200/), GPUS=2 on the 2-GPU one (h200x2/).
GPUS=${GPUS:-"2 4"}
MAX=${GPUS##* }
devs() { seq -s, 0 $(($1 - 1)); }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
W=/tmp/cap; mkdir -p $W
cd "$(dirname "$0")"
{ date -u; uname -a; nvidia-smi; nvidia-smi topo -m; nvcc --version; } > $W/machine.txt 2>&1
H=$(find /opt /usr/local /usr/include /usr/lib -name nccl.h 2>/dev/null | head -1)
L=$(ls $(dirname $H)/../lib/libnccl.so* 2>/dev/null | head -1); [ -n "$L" ] || L=$(find /opt /usr/local /usr/lib -name "libnccl.so*" 2>/dev/null | head -1)
echo "nccl.h=$H lib=$L" | tee -a $W/machine.txt
mkdir -p /tmp/nh/lib; ln -sf "$(dirname $H)" /tmp/nh/include; ln -sf "$L" /tmp/nh/lib/libnccl.so; ln -sf "$L" /tmp/nh/lib/libnccl.so.2
export LD_LIBRARY_PATH=/tmp/nh/lib:/usr/local/cuda/lib64:$(dirname $L):$LD_LIBRARY_PATH
B="all_reduce all_gather reduce_scatter alltoall sendrecv broadcast"
( cd src && time make -j16 NCCL_HOME=/tmp/nh BUILDDIR=/tmp/build NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BIN_FILES_LIST="$B" ) > $W/build.log 2>&1
echo "build rc=$?"; tail -5 $W/build.log
ls /tmp/build
r() { # name env... -- args
  local n=$1; shift
  echo "== $n: $*" >> $W/commands.txt
  timeout ${T:-90} env "$@" > $W/$n.txt 2>&1; echo "$n rc=$?" | tee -a $W/commands.txt
}
S="-b 8 -e 256M -f 2 -w 5 -n 20"
for g in $GPUS; do
  V=$(devs $g)
  for c in $B; do
    r ${c}_g$g CUDA_VISIBLE_DEVICES=$V /tmp/build/${c}_perf $S -g $g -J $W/${c}_g$g.json
  done
done
r all_reduce_g${MAX}_debug_info NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=$(devs $MAX) /tmp/build/all_reduce_perf $S -g $MAX
r alltoall_g2_debug_info NCCL_DEBUG=INFO CUDA_VISIBLE_DEVICES=0,1 /tmp/build/alltoall_perf $S -g 2
r all_reduce_g2_debug_info_socket_p2p_shm_disabled NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 CUDA_VISIBLE_DEVICES=0,1 /tmp/build/all_reduce_perf -b 8 -e 64M -f 2 -w 2 -n 10 -g 2 -J $W/all_reduce_g2_socket.json
T=45 r all_reduce_g2_socket_bad_ifname_failure NCCL_DEBUG=WARN NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_SOCKET_IFNAME=nosuchif0 CUDA_VISIBLE_DEVICES=0,1 /tmp/build/all_reduce_perf -b 8 -e 1M -f 2 -g 2
r sendrecv_g2_check0_na CUDA_VISIBLE_DEVICES=0,1 /tmp/build/sendrecv_perf -b 8 -e 64M -f 2 -g 2 -c 0
T=45 r all_reduce_g$((MAX * 2))_invalid_gpu_count CUDA_VISIBLE_DEVICES=$(devs $MAX) /tmp/build/all_reduce_perf -b 8 -e 1M -f 2 -g $((MAX * 2))
r all_reduce_g2_min_bw_failed NCCL_TESTS_MIN_BW=100000 CUDA_VISIBLE_DEVICES=0,1 /tmp/build/all_reduce_perf -b 8 -e 64M -f 2 -g 2
r all_reduce_g2_per_iter_timing CUDA_VISIBLE_DEVICES=0,1 /tmp/build/all_reduce_perf -b 8 -e 16M -f 2 -g 2 -I 1
r all_reduce_g2_dtype_all CUDA_VISIBLE_DEVICES=0,1 /tmp/build/all_reduce_perf -b 1K -e 64K -f 4 -g 2 -d all
ls -la $W
tar czf $OUT/captures.tgz -C $W .
