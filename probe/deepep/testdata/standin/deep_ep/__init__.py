# rdmabench's stand-in for DeepEP V1's Python package, for CI machines
# without a GPU: Buffer shows V1's API (rdmabench-deepep tells V1 from V2
# by it), and RDMABENCH_STANDIN is the kernel part the probe runs in place
# of DeepEP's: the same results, one dict per rank and phase, from token
# bytes really exchanged between the ranks over the stand-in
# torch.distributed. Never a measurement of DeepEP: its version says
# "+standin". RDMABENCH_STANDIN_FAIL=normal|low_latency makes that kernel
# set fail on every rank; RDMABENCH_STANDIN_HANG=1 makes the normal one
# hang (the watchdog's test).
from ._kernels import Kernels as RDMABENCH_STANDIN  # noqa: F401

__version__ = "1.2.1+standin"
topk_idx_t = "int64"


class Buffer:
    num_sms = 20

    def low_latency_dispatch(self, *args, **kwargs):
        raise NotImplementedError("stand-in: rdmabench-deepep runs RDMABENCH_STANDIN instead")
