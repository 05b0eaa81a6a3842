#!/bin/bash
# GPU lane on a lent two-GPU machine (nvidia-h200-x2): builds nccl-tests twice against the
# image's NCCL wheel (plain, and MPI=1 against the host's Open MPI), runs the e2e-gpu test
# binary with 2 GPUs (rdmabench run of scenarios/gpu-single-host.yaml with gpus: 2, then the
# same commands raw, compared), then the one-process-per-GPU path: rdmabench run of
# scenarios/gpu-mpi-single-host.yaml (mpirun through the launcher) and the same mpirun
# commands raw. Everything comes back under $OUT as one tarball.
set -x
R=$PWD; G=$R/.work/gpu; E=/tmp/e2e; mkdir -p $E/mpi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{ date -u; uname -a; nvidia-smi; nvidia-smi topo -m; nvidia-smi nvlink -s | head -20; nvcc --version; nproc; which mpirun mpicc; mpirun --version; mpicc --showme; ls /dev/infiniband; } > $E/machine.txt 2>&1
H=$(find /opt /usr/local /usr/include /usr/lib -name nccl.h 2>/dev/null | head -1)
L=$(ls $(dirname $H)/../lib/libnccl.so* 2>/dev/null | head -1)
echo "nccl.h=$H lib=$L" | tee -a $E/machine.txt
mkdir -p /tmp/nh/lib; ln -sf "$(dirname $H)" /tmp/nh/include; ln -sf "$L" /tmp/nh/lib/libnccl.so; ln -sf "$L" /tmp/nh/lib/libnccl.so.2
export LD_LIBRARY_PATH=/tmp/nh/lib:/usr/local/cuda/lib64:$(dirname $L):$LD_LIBRARY_PATH
MH=$(dirname $(mpicc --showme:libdirs | awk '{print $1}'))
tar xzf $G/nccl-tests.tar.gz -C /tmp; cp -a /tmp/nccl-tests /tmp/nccl-tests-mpi
B="NCCL_HOME=/tmp/nh NVCC_GENCODE=-gencode=arch=compute_90,code=sm_90 BIN_FILES_LIST=all_reduce alltoall sendrecv"
( cd /tmp/nccl-tests/src && time make -j16 NCCL_HOME=/tmp/nh BUILDDIR=/tmp/build NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BIN_FILES_LIST="all_reduce alltoall sendrecv" ) > $E/build.log 2>&1 &
( cd /tmp/nccl-tests-mpi/src && time make -j16 MPI=1 MPI_HOME=$MH NCCL_HOME=/tmp/nh BUILDDIR=/tmp/build-mpi NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" BIN_FILES_LIST="all_reduce alltoall sendrecv" ) > $E/build-mpi.log 2>&1
echo "mpi build rc=$?"; wait; tail -3 $E/build.log $E/build-mpi.log
gunzip -c $G/rdmabench.gz > /tmp/rdmabench; gunzip -c $G/e2egpu.test.gz > /tmp/e2egpu.test; chmod +x /tmp/rdmabench /tmp/e2egpu.test
cd /tmp
# 1. one process, -g 2 (plain build)
PATH=/tmp/build:$PATH RDMABENCH_E2E_GPU=1 RDMABENCH_BIN=/tmp/rdmabench RDMABENCH_GPU_SCENARIO=$G/gpu-single-host.yaml RDMABENCH_E2E_OUT=$E RDMABENCH_GPUS=2 /tmp/e2egpu.test -test.v -test.timeout 300s > $E/e2e-gpu.log 2>&1
echo "e2e rc=$?"; cat $E/fidelity.txt
# 2. one process per GPU through mpirun (MPI=1 build): rdmabench, then raw
export PATH=/tmp/build-mpi:$PATH
T0=$(date +%s.%N); /tmp/rdmabench run $G/gpu-mpi-single-host.yaml --out $E/mpi/rdmabench --html none > $E/mpi/rdmabench-stdout.txt 2> $E/mpi/rdmabench-stderr.txt; echo "rdmabench mpi rc=$? wall $(echo "$(date +%s.%N) - $T0" | bc)" | tee $E/mpi/walls.txt
for c in sendrecv all_reduce; do
  T0=$(date +%s.%N)
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET mpirun --allow-run-as-root -np 2 -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS -x NCCL_NVLS_ENABLE ${c}_perf -b 1M -e 4G -f 2 -g 1 -n 50 -c 1 > $E/mpi/raw-$c.txt 2>&1
  echo "raw mpirun $c rc=$? wall $(echo "$(date +%s.%N) - $T0" | bc)" | tee -a $E/mpi/walls.txt
done
# 3. a real launcher refusal: more processes than slots
mpirun --allow-run-as-root -np 3 -H 127.0.0.1:2 sendrecv_perf -b 1M -e 1M -g 1 > $E/mpi/refusal-slots.txt 2>&1; echo "refusal rc=$?" >> $E/mpi/walls.txt
cat $E/mpi/rdmabench-stdout.txt; tail -5 $E/mpi/raw-*.txt
tar czf $OUT/e2e2.tgz -C $E .
