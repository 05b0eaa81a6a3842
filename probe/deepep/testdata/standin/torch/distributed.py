# torch.distributed as rdmabench-deepep uses it, over TCP: init_process_group
# reads the env contract (MASTER_ADDR, MASTER_PORT) as torch's env:// does;
# rank 0 listens there and the others connect, retrying until the timeout.
# Collectives go through rank 0 (a star): all_gather_object and barrier.
import os
import pickle
import socket
import struct
import time

_state = {}


class ProcessGroup:
    def __init__(self, ranks):
        self.ranks = list(ranks)

    def rank(self):
        return _state["rank"]

    def size(self):
        return len(self.ranks)


def _send(sock, obj):
    data = pickle.dumps(obj)
    sock.sendall(struct.pack("!Q", len(data)) + data)


def _recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise RuntimeError("stand-in torch.distributed: a peer closed its connection")
        buf += chunk
    return buf


def _recv(sock):
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return pickle.loads(_recv_exact(sock, n))


def init_process_group(backend=None, init_method="env://", world_size=-1, rank=-1, timeout=None, device_id=None):
    if init_method != "env://":
        raise ValueError(f"stand-in torch.distributed reads only env://, not {init_method}")
    addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    limit = timeout.total_seconds() if timeout is not None else 1800
    deadline = time.monotonic() + limit
    _state.update(rank=rank, world=world_size, peers={})
    if rank == 0:
        srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind((addr, port))
        srv.listen(world_size)
        _state["server"] = srv
        while len(_state["peers"]) < world_size - 1:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"timed out after {limit:g} s waiting for {world_size - 1 - len(_state['peers'])} "
                                   f"rank(s) at {addr}:{port}")
            srv.settimeout(left)
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                continue
            conn.settimeout(None)
            _state["peers"][_recv(conn)] = conn
        return
    last = None
    while time.monotonic() < deadline:
        try:
            sock = socket.create_connection((addr, port), timeout=2)
            sock.settimeout(None)
            _send(sock, rank)
            _state["root"] = sock
            return
        except OSError as e:
            last = e
            time.sleep(0.05)
    raise RuntimeError(f"timed out after {limit:g} s connecting to {addr}:{port}: {last}")


def new_group(ranks=None):
    return ProcessGroup(ranks if ranks is not None else range(_state["world"]))


def get_rank(group=None):
    return _state["rank"]


def get_world_size(group=None):
    return _state["world"]


def all_gather_object(out, obj, group=None):
    if _state["rank"] == 0:
        every = [obj] + [None] * (_state["world"] - 1)
        for r, conn in _state["peers"].items():
            every[r] = _recv(conn)
        for conn in _state["peers"].values():
            _send(conn, every)
    else:
        _send(_state["root"], obj)
        every = _recv(_state["root"])
    out[:] = every


def barrier(group=None):
    all_gather_object([None] * _state["world"], None, group)


def destroy_process_group(group=None):
    for conn in list(_state.get("peers", {}).values()) + [_state.get("root"), _state.get("server")]:
        if conn is not None:
            conn.close()
    _state.clear()
