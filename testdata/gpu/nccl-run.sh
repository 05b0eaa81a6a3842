#!/bin/bash
# GPU lane on a lent one-GPU machine: builds nccl-tests against the image's NCCL wheel, runs
# the e2e-gpu test binary (rdmabench run of scenarios/gpu-single-host.yaml, then the same
# nccl-tests commands raw, compared), and returns everything under $OUT.
set -x
R=$PWD; G=$R/.work/gpu; E=/tmp/e2e; mkdir -p $E
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
{ date -u; uname -a; nvidia-smi; nvidia-smi topo -m; nvcc --version; nproc; which mpirun mpicc meson ninja cmake libtoolize; mpirun --version; ls /dev/infiniband; ls /usr/include/infiniband | head -3; pkg-config --list-all | grep -i -E "ucx|fabric|ibverbs|absl|gflags|etcd"; ls /usr/lib/x86_64-linux-gnu | grep -i -E "ucp|ucx|gflags|absl" | head; } > $E/machine.txt 2>&1
H=$(find /opt /usr/local /usr/include /usr/lib -name nccl.h 2>/dev/null | head -1)
L=$(ls $(dirname $H)/../lib/libnccl.so* 2>/dev/null | head -1)
echo "nccl.h=$H lib=$L" | tee -a $E/machine.txt
mkdir -p /tmp/nh/lib; ln -sf "$(dirname $H)" /tmp/nh/include; ln -sf "$L" /tmp/nh/lib/libnccl.so; ln -sf "$L" /tmp/nh/lib/libnccl.so.2
export LD_LIBRARY_PATH=/tmp/nh/lib:/usr/local/cuda/lib64:$(dirname $L):$LD_LIBRARY_PATH
tar xzf $G/nccl-tests.tar.gz -C /tmp
( cd /tmp/nccl-tests/src && time make -j16 NCCL_HOME=/tmp/nh BUILDDIR=/tmp/build NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BIN_FILES_LIST="all_reduce alltoall sendrecv" ) > $E/build.log 2>&1
echo "build rc=$?"; tail -3 $E/build.log
export PATH=/tmp/build:$PATH
gunzip -c $G/rdmabench.gz > /tmp/rdmabench; gunzip -c $G/e2egpu.test.gz > /tmp/e2egpu.test; chmod +x /tmp/rdmabench /tmp/e2egpu.test
cd /tmp && RDMABENCH_E2E_GPU=1 RDMABENCH_BIN=/tmp/rdmabench RDMABENCH_GPU_SCENARIO=$G/gpu-single-host.yaml RDMABENCH_E2E_OUT=$E RDMABENCH_GPUS=1 /tmp/e2egpu.test -test.v -test.timeout 480s > $E/e2e-gpu.log 2>&1
echo "e2e rc=$?"; cat $E/fidelity.txt; tail -20 $E/e2e-gpu.log
tar czf $OUT/e2e.tgz -C $E .
