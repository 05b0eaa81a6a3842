#!/bin/bash
# Call 28 (a record): the final tree (e256658, bound calls): nixlbench and --native alternated twelve times (the order swapped every other pair), 1-16 MiB, then the shipped gpu-kv-single-host.yaml, on a fresh 2xH200 machine.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
G=$(pwd)/.gpu; R=/tmp/res; rm -rf /tmp/res; mkdir -p $R; RB=/root/rb
L=$R/log.txt; log() { echo "$(date -u +%T) +$(el)s $*" | tee -a $L; tar -C /tmp -czf $OUT/t.tgz res && mv $OUT/t.tgz $OUT/c28.tgz; }
mkdir -p $RB; for b in rdmabench rdmabench-nccl rdmabench-nixl; do xz -dc $G/bin/$b.xz > $RB/$b; chmod +x $RB/$b; done
cat $G/nbpre/nb.tar.xz.* | xz -dc | tar -C / -xf - || { log "unpack failed"; exit 1; }
. /root/nb/env.sh; PY=/opt/torch/.venv/bin/python3; export PATH=$(dirname $PY):$RB:$PATH RDMABENCH_PYTHON=$PY
{ date -u; nvidia-smi -L; nvidia-smi topo -m; lscpu; $RB/rdmabench version; } > $R/machine.txt 2>&1
{ env | grep -E '^(LD_LIBRARY_PATH|NIXL_PLUGIN_DIR|PYTHONPATH)='; $PY -c 'import nixl,sys; print(nixl.__file__)'; for d in $(echo ${LD_LIBRARY_PATH:-} | tr : ' '); do ls -l $d/libnixl*.so* 2>/dev/null; done; sha256sum $RB/rdmabench-nccl $RB/rdmabench-nixl; } > $R/libs.txt 2>&1
cp $G/kv-like19.yaml $R/
(cd $R && timeout -k 10 300 rdmabench run $R/kv-like19.yaml --out $R/rb-like19 --html none > $R/rb-like19.txt 2>&1); log "like19 rc=$?"
tail -4 $R/rb-like19.txt | tee -a $L
cp scenarios/gpu-kv-single-host.yaml $R/
(cd $R && timeout -k 10 150 rdmabench run $R/gpu-kv-single-host.yaml --out $R/rb-shipped --html none > $R/rb-shipped.txt 2>&1); log "shipped rc=$?"
tail -14 $R/rb-shipped.txt | tee -a $L
log end
