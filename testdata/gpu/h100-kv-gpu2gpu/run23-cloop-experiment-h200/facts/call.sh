#!/bin/bash
# Call 23 (a record; EXPERIMENT build): --native's timed loop in Go and in C (cloop.c), against nixlbench, 2xH200.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
G=$(pwd)/.gpu; R=/tmp/res; rm -rf /tmp/res; mkdir -p $R; RB=/root/rb
L=$R/log.txt; log() { echo "$(date -u +%T) +$(el)s $*" | tee -a $L; tar -C /tmp -czf $OUT/t.tgz res && mv $OUT/t.tgz $OUT/c23.tgz; }
mkdir -p $RB; xz -dc $G/bin/rdmabench.xz > $RB/rdmabench; xz -dc $G/bin/rdmabench-nccl.xz > $RB/rdmabench-nccl; chmod +x $RB/rdmabench $RB/rdmabench-nccl; xz -dc $G/bin/rdmabench-nixl.xz > $RB/rdmabench-nixl; chmod +x $RB/rdmabench-nixl
cat $G/nbpre/nb.tar.xz.* | xz -dc | tar -C / -xf - || { log "unpack failed"; exit 1; }
. /root/nb/env.sh; PY=/opt/torch/.venv/bin/python3; export PATH=$(dirname $PY):$RB:$PATH RDMABENCH_PYTHON=$PY
{ date -u; nvidia-smi -L; nvidia-smi topo -m; lscpu; $RB/rdmabench version; } > $R/machine.txt 2>&1
{ env | grep -E '^(LD_LIBRARY_PATH|NIXL_PLUGIN_DIR|PYTHONPATH)='; $PY -c 'import nixl,sys; print(nixl.__file__)'; for d in $(echo ${LD_LIBRARY_PATH:-} | tr : ' '); do ls -l $d/libnixl*.so* 2>/dev/null; done; sha256sum $RB/rdmabench-nccl $RB/rdmabench-nixl; } > $R/libs.txt 2>&1
gcc -O2 -shared -fPIC -o $RB/cloop.so $G/cloop.c || { log "cloop build failed"; exit 1; }; sha256sum $G/cloop.c $RB/cloop.so >> $R/libs.txt; log "unpacked"; cat $R/libs.txt | head -20 | tee -a $L
cp $G/kv-like17.yaml $R/
(cd $R && timeout -k 10 420 rdmabench run $R/kv-like17.yaml --out $R/rb-like17 --html none > $R/rb-like17.txt 2>&1); log "like17 rc=$?"
tail -5 $R/rb-like17.txt | tee -a $L
log end
