#!/bin/bash
# Call 13 (not committed): batch 32, the probe in nixlbench's layout (one region of 32 blocks).
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
G=$(pwd)/.gpu; R=/tmp/res; rm -rf /tmp/res; mkdir -p $R; mkdir -p $R; RB=/root/rb
L=$R/log.txt; log() { echo "$(date -u +%T) +$(el)s $*" | tee -a $L; tar -C /tmp -czf $OUT/t.tgz res && mv $OUT/t.tgz $OUT/c13.tgz; }
mkdir -p $RB; xz -dc $G/bin/rdmabench.xz > $RB/rdmabench; chmod +x $RB/rdmabench; cp $G/bin/rdmabench-nixl $RB/
cat $G/nbpre/nb.tar.xz.* | xz -dc | tar -C / -xf - || { log "unpack failed"; exit 1; }
. /root/nb/env.sh; PY=/opt/torch/.venv/bin/python3; export PATH=$(dirname $PY):$RB:$PATH RDMABENCH_PYTHON=$PY
{ date -u; nvidia-smi -L; nvidia-smi topo -m; lscpu; lscpu -e; $RB/rdmabench version; } > $R/machine.txt 2>&1
log "unpacked"
cp $G/kv-like9.yaml $R/
(cd $R && timeout -k 10 300 rdmabench run $R/kv-like9.yaml --out $R/rb-like9 --html none > $R/rb-like9.txt 2>&1); log "like9 rc=$?"
tail -4 $R/rb-like9.txt | tee -a $L
log end
