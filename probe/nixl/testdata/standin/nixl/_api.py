# The stand-in's agent: each agent serves its registered DRAM over a TCP
# socket; READ asks the peer for bytes at its addresses, WRITE sends them,
# a notification is a message the peer queues for get_new_notifs.
#
# The wire, simple to speak from C (testdata/standin/nixl_capi.c, a native
# initiator's stand-in libnixl_capi.so): a frame is an 8-byte big-endian
# length, that many bytes of a JSON header, an 8-byte big-endian length and
# that many bytes of payload.
#   {"kind": "READ", "descs": [[addr, len], ...]}, no payload
#       -> {"kind": "DATA"}, the descs' bytes one after another
#   {"kind": "WRITE", "descs": [[addr, len], ...]}, the bytes -> {"kind": "OK"}
#   {"kind": "NOTIF", "from": agent name}, the message -> {"kind": "OK"}
import ctypes
import json
import os
import socket
import struct
import threading

from . import _bindings


class nixl_agent_config:
    def __init__(self, enable_prog_thread=True, enable_listen_thread=False, listen_port=0,
                 capture_telemetry=False, num_threads=0, backends=["UCX"], sync_mode=None):
        self.backends = backends


def _send(sock, header, payload=b""):
    h = json.dumps(header).encode()
    sock.sendall(struct.pack("!Q", len(h)) + h + struct.pack("!Q", len(payload)) + payload)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("stand-in: peer went away")
        buf += chunk
    return bytes(buf)


def _recv(sock):
    """A frame: (its header, a dict; its payload, bytes)."""
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    header = json.loads(_recv_exact(sock, n))
    (n,) = struct.unpack("!Q", _recv_exact(sock, 8))
    return header, _recv_exact(sock, n)


class _Dlist:
    def __init__(self, agent, descs):
        self.agent, self.descs = agent, descs


class _Xfer:
    def __init__(self, op, local, remote, rids, notif):
        self.op, self.local, self.remote, self.rids, self.notif = op, local, remote, rids, notif
        self.state = "INIT"
        self._handle = id(self)  # NIXL's nixl_xfer_handle keeps the C++ handle here


class _BindingAgent:
    """nixl_agent.agent: NIXL's pybind nixlAgent, the calls rdmabench-nixl
    --as-nixlbench makes on a transfer's handle (an int)."""

    def __init__(self, owner):
        self._owner, self._xfers = owner, {}

    def postXferReq(self, reqh, notif_msg=b""):
        self._owner.transfer(self._xfers[reqh], notif_msg)
        _bindings.posts += 1  # said at exit, for tests that the bindings were timed
        return _bindings.nixl_status_t(1, "NIXL_IN_PROG")  # pybind11 returns a new object

    def getXferStatus(self, reqh):
        # In progress at the first poll after a post, as a real transfer
        # mostly is: the timed loop's poll runs, not only its post.
        x = self._xfers[reqh]
        x.polls = getattr(x, "polls", 0) + 1
        if x.polls % 2 == 1:
            return _bindings.nixl_status_t(1, "NIXL_IN_PROG")
        if os.environ.get("NIXL_STANDIN_STATUS_ERR"):
            # NIXL's bindings raise a failed status (throw_nixl_exception).
            raise _bindings.nixlBackendError("NIXL_ERR_BACKEND")
        x.state = "DONE"
        return _bindings.nixl_status_t(0, "NIXL_SUCCESS")


class nixl_agent:
    def __init__(self, agent_name, nixl_conf=None, instantiate_all=False):
        self.name = agent_name
        self.backends = {b: b for b in (nixl_conf.backends if nixl_conf else ["UCX"])}
        self._notifs, self._lock = {}, threading.Lock()
        self.agent = _BindingAgent(self)
        self._peers = {}  # name -> (host, port)
        self._conns = {}
        self._srv = socket.socket()
        self._srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._srv.bind((os.environ.get("NIXL_STANDIN_BIND", "127.0.0.1"), 0))
        self._srv.listen(16)
        self._addr = (os.environ.get("NIXL_STANDIN_ADDR", "127.0.0.1"), self._srv.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self._srv.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        with conn:
            while True:
                try:
                    header, payload = _recv(conn)
                except (ConnectionError, OSError, EOFError):
                    return
                kind = header["kind"]
                if kind == "READ":
                    data = b"".join(ctypes.string_at(a, n) for a, n in header["descs"])
                    if os.environ.get("NIXL_STANDIN_CORRUPT") and data:
                        # tests: a transfer that reports DONE with wrong bytes
                        data = bytes([data[0] ^ 0xFF]) + data[1:]
                    _send(conn, {"kind": "DATA"}, data)
                elif kind == "WRITE":
                    off = 0
                    if os.environ.get("NIXL_STANDIN_CORRUPT_WRITE") and payload:
                        # tests: a WRITE that reports DONE with wrong bytes
                        payload = bytes([payload[0] ^ 0xFF]) + payload[1:]
                    for a, n in header["descs"]:
                        ctypes.memmove(a, payload[off:off + n], n)
                        off += n
                    _send(conn, {"kind": "OK"})
                elif kind == "NOTIF":
                    with self._lock:
                        self._notifs.setdefault(header["from"], []).append(payload)
                    _send(conn, {"kind": "OK"})

    def _conn(self, name):
        c = self._conns.get(name)
        if c is None:
            c = socket.create_connection(self._peers[name], timeout=60)
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conns[name] = c
        return c

    def get_plugin_list(self):
        return ["UCX"]

    def create_backend(self, backend, initParams={}):
        if backend != "UCX":
            raise RuntimeError(f"stand-in: no {backend} plugin")
        if backend in self.backends:  # NIXL refuses a second one (NIXL_ERR_INVALID_PARAM)
            raise RuntimeError(f"stand-in: backend {backend} already created")
        self.backends[backend] = backend
        # Said for tests: the parameters the probe made the backend with.
        params = ",".join(f"{k}={v}" for k, v in sorted(initParams.items()))
        print(f"# stand-in: {backend} created with {params}", flush=True)

    def register_memory(self, reg_list, mem_type=None, backends=[]):
        if mem_type not in ("DRAM", "cpu"):
            raise RuntimeError(f"stand-in: {mem_type} is not supported (DRAM only)")
        return list(reg_list)

    def deregister_memory(self, dereg_list, backends=[]):
        pass

    def get_agent_metadata(self):
        return json.dumps({"name": self.name, "addr": list(self._addr)}).encode()

    def add_remote_agent(self, metadata):
        md = json.loads(metadata)
        self._peers[md["name"]] = tuple(md["addr"])
        return md["name"]

    def remove_remote_agent(self, agent):
        c = self._conns.pop(agent, None)
        if c:
            c.close()
        self._peers.pop(agent, None)

    def prep_xfer_dlist(self, agent_name, xfer_list, mem_type=None, backends=[]):
        return _Dlist(agent_name, [(a, n) for a, n, _dev in xfer_list])

    def release_dlist_handle(self, handle):
        pass

    def make_prepped_xfer(self, operation, local_xfer_side, local_indices, remote_xfer_side, remote_indices,
                          notif_msg=b"", backends=[], skip_desc_merge=False):
        if len(local_indices) != len(remote_indices):
            raise RuntimeError("stand-in: index lists differ in length")
        x = _Xfer(operation, [local_xfer_side.descs[i] for i in local_indices], remote_xfer_side.agent,
                  [remote_xfer_side.descs[i] for i in remote_indices], notif_msg)
        self.agent._xfers[x._handle] = x
        return x

    def transfer(self, handle, notif_msg=b""):
        c = self._conn(handle.remote)
        if handle.op == "READ":
            _send(c, {"kind": "READ", "descs": handle.rids})
            (_, data), off = _recv(c), 0
            for a, n in handle.local:
                ctypes.memmove(a, data[off:off + n], n)
                off += n
        else:
            _send(c, {"kind": "WRITE", "descs": handle.rids}, b"".join(ctypes.string_at(a, n) for a, n in handle.local))
            _recv(c)
        if handle.notif:
            self.send_notif(handle.remote, handle.notif)
        handle.state = "PROC"
        return "PROC"

    def check_xfer_state(self, handle):
        handle.state = "DONE"
        return "DONE"

    def release_xfer_handle(self, handle):
        self.agent._xfers.pop(handle._handle, None)

    def send_notif(self, remote_agent_name, notif_msg):
        c = self._conn(remote_agent_name)
        _send(c, {"kind": "NOTIF", "from": self.name}, bytes(notif_msg))
        _recv(c)

    def get_new_notifs(self, backends=[]):
        with self._lock:
            out, self._notifs = self._notifs, {}
        return out
