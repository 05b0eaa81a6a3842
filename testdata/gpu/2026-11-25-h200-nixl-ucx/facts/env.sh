export PATH=/tmp/gp/bin:/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/tmp/gp/lib:/usr/local/cuda/lib64:/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NIXL_PLUGIN_DIR=/tmp/gp/lib/plugins
# UCCL's transport libraries are dlopen'ed: nccl (UCCL_P2P_TRANSPORT=nccl|tcp) from the NCCL wheel
export UCCL_NCCL_SO=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2
