# rdmabench's stand-in for torch, for CI machines without torch or a GPU:
# exactly the surface rdmabench-deepep uses outside DeepEP's kernels (the
# versions, the CUDA device calls, torch.distributed's env-contract
# rendezvous and object collectives over TCP). Never a measurement of
# torch: its version says "+standin".
import os

from . import cuda, distributed, version  # noqa: F401

__version__ = "2.11.0+standin"


class device:
    def __init__(self, spec):
        self.spec = spec

    def __repr__(self):
        return f"device({self.spec!r})"


def _gpus():
    return int(os.environ.get("RDMABENCH_STANDIN_GPUS", "8"))
