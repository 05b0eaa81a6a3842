# torch.cuda as rdmabench-deepep's launch part calls it: a host with
# RDMABENCH_STANDIN_GPUS (default 8) stand-in GPUs.
import os

_current = [0]


def device_count():
    return int(os.environ.get("RDMABENCH_STANDIN_GPUS", "8"))


def set_device(i):
    if not 0 <= i < device_count():
        raise RuntimeError(f"CUDA error: invalid device ordinal {i}")
    _current[0] = i


def current_device():
    return _current[0]


def get_device_name(i=None):
    return "Stand-in GPU"


def synchronize(device=None):
    pass


class nccl:
    @staticmethod
    def version():
        return (2, 28, 9)
