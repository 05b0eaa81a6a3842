#!/bin/bash
# Call 15 (not committed): batch 32 in one region; the probe's timed loop on a thread of its own (no CUDA context current: RDMABENCH_NIXL_POST_THREAD=1, an uncommitted experiment build) against nixlbench and the probe as it is.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
G=$(pwd)/.gpu; R=/tmp/res; rm -rf /tmp/res; mkdir -p $R; RB=/root/rb
L=$R/log.txt; log() { echo "$(date -u +%T) +$(el)s $*" | tee -a $L; tar -C /tmp -czf $OUT/t.tgz res && mv $OUT/t.tgz $OUT/c15.tgz; }
mkdir -p $RB; xz -dc $G/bin/rdmabench.xz > $RB/rdmabench; chmod +x $RB/rdmabench; cp $G/bin/rdmabench-nixl $RB/
cat $G/nbpre/nb.tar.xz.* | xz -dc | tar -C / -xf - || { log "unpack failed"; exit 1; }
. /root/nb/env.sh; PY=/opt/torch/.venv/bin/python3; export PATH=$(dirname $PY):$RB:$PATH RDMABENCH_PYTHON=$PY
{ date -u; nvidia-smi -L; $RB/rdmabench version; } > $R/machine.txt 2>&1
log "unpacked"
cp $G/kv-like11?.yaml $R/
(cd $R && timeout -k 10 60 rdmabench run $R/kv-like11a.yaml --out $R/rb-like11a --html none > $R/rb-like11a.txt 2>&1); log "like11a rc=$?"
(cd $R && RDMABENCH_NIXL_POST_THREAD=1 timeout -k 10 60 rdmabench run $R/kv-like11b.yaml --out $R/rb-like11b --html none > $R/rb-like11b.txt 2>&1); log "like11b rc=$?"
(cd $R && timeout -k 10 40 rdmabench run $R/kv-like11c.yaml --out $R/rb-like11c --html none > $R/rb-like11c.txt 2>&1); log "like11c rc=$?"
for f in $R/rb-like11?/raw/*/*initiator*; do echo "$f"; grep "^1048576 \|^16777216 " $f; done | tee -a $L
log end
