# rdmabench's NIXL probe: the KV-cache transfer of disaggregated serving,
# driven through NIXL's Python API the way vLLM's NixlConnector drives it,
# with the python3 and the nixl package of the image that serves.
#
# Two agents: the target (prefill) registers its KV regions and publishes
# its agent metadata and region addresses in rdmabench's etcd; the
# initiator (decode) registers its own, loads the target's metadata and
# moves one "request" at a time: one descriptor per block of every region
# (layers x K/V), all in one transfer, READ by default (decode pulls).
# Per request, as vLLM: make_prepped_xfer from the prepared descriptor
# lists, transfer, poll check_xfer_state until DONE, release.
#
# The table is nixlbench's (same columns, same definitions: GB/s is 1e9
# bytes/s over the whole timed loop, "Avg Lat." is that loop's time per
# descriptor), so that the two can be read side by side; the banner says
# which program measured and which libraries it loaded.
#
# Only the standard library besides nixl (and torch for VRAM): the etcd
# rendezvous goes through etcd's JSON gateway (/v3/kv/*).
#
# Exit status: 0 measured, 1 failed (a line "rdmabench-nixl: ..." says
# why), 2 bad arguments.

import argparse
import base64
import http.client
import ctypes
import faulthandler
import json
import os
import platform
import sys
import time
import urllib.error
import urllib.request

PROGRAM = "rdmabench-nixl"
FORMAT_VERSION = "1"
DONE = b"rdmabench-nixl:done"
NOTIF = b"rdmabench-nixl:request"
NIXLBENCH_NOTIF = b"0xBEEF"  # nixlbench's, with every post (nixl_worker.cpp execTransfer)


failure = ""  # what fail() said last: the peer reads it from this side's key


def fail(msg, code=1):
    # Exit 2 is a bad command line, said as argparse says its own
    # ("rdmabench-nixl: error: …"): the parser classes both usage errors.
    global failure
    failure = msg
    print(f"{PROGRAM}: {'error: ' if code == 2 else ''}{msg}", file=sys.stderr, flush=True)
    sys.exit(code)


# ---- etcd, through its JSON gateway -------------------------------------


# What an etcd call through the gateway may raise: a refused or broken
# connection, an HTTP error, a truncated or garbled reply.
ETCD_ERRORS = (urllib.error.URLError, OSError, ValueError, http.client.HTTPException)


def _b64(s):
    return base64.b64encode(s if isinstance(s, bytes) else s.encode()).decode()


def etcd_call(url, path, body, timeout):
    req = urllib.request.Request(url.rstrip("/") + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"{}")


def etcd_put(url, key, value, lease=None):
    body = {"key": _b64(key), "value": _b64(value)}
    if lease is not None:
        body["lease"] = lease.id
    try:
        etcd_call(url, "/v3/kv/put", body, 10)
    except ETCD_ERRORS as e:
        fail(f"etcd at {url}: put {key}: {e} (rdmabench's etcd, its JSON gateway /v3/kv/put)")


def etcd_gone(url, key, deadline):
    """Whether key is gone by deadline (polled at least once; etcd errors
    count as not yet)."""
    while True:
        try:
            if not etcd_call(url, "/v3/kv/range", {"key": _b64(key)}, 5).get("kvs"):
                return True
        except ETCD_ERRORS:
            pass
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


class Lease:
    """An etcd lease that this process's keys live under: kept alive while
    it runs, revoked (its keys deleted) when it ends, and expired TTL
    seconds after a kill. A peer started later under the same --key never
    reads a dead process's agent metadata for long."""

    TTL = 10

    def __init__(self, url):
        import threading
        self.url = url
        try:
            self.id = etcd_call(url, "/v3/lease/grant", {"TTL": self.TTL}, 10)["ID"]
        except ETCD_ERRORS + (KeyError,) as e:
            fail(f"etcd at {url}: lease grant: {e} (rdmabench's etcd, its JSON gateway /v3/lease/grant)")
        self.stop = threading.Event()
        threading.Thread(target=self._keep, daemon=True).start()

    def _keep(self):
        while not self.stop.wait(self.TTL / 3):
            try:
                etcd_call(self.url, "/v3/lease/keepalive", {"ID": self.id}, 5)
            except Exception:  # noqa: BLE001  any one bad beat: the next tries again (the thread must live)
                pass

    def revoke(self):
        self.stop.set()
        try:
            etcd_call(self.url, "/v3/lease/revoke", {"ID": self.id}, 5)
        except ETCD_ERRORS:
            pass  # expires by itself within TTL


def etcd_wait(url, key, deadline, what):
    """The value of key once it exists; fails at deadline, naming what it
    waited for and the last error seen."""
    last = "the key was not there"
    while True:
        try:
            kvs = etcd_call(url, "/v3/kv/range", {"key": _b64(key)}, 5).get("kvs") or []
            if kvs:
                return base64.b64decode(kvs[0].get("value", ""))
        except ETCD_ERRORS as e:
            last = f"etcd at {url}: {e}"
        if time.monotonic() > deadline:
            fail(f"waited for {what} at {key}: {last}")
        time.sleep(0.05)


# ---- memory: KV regions in VRAM (torch) or DRAM (torch or ctypes) ---------


def pattern_byte(i, region):
    return ((i % 251) + region) % 256


class Regions:
    """regions buffers of capacity bytes each, on one device."""

    def __init__(self, seg, count, capacity, device, alloc="torch"):
        self.seg, self.count, self.capacity, self.device = seg, count, capacity, device
        self.bufs, self.addrs = [], []
        if seg == "VRAM":
            import torch

            self.torch = torch
            for _ in range(count):
                if alloc == "driver":
                    t = driver_tensor(torch, capacity, device)
                else:  # torch's caching allocator: how vLLM allocates its KV cache
                    t = torch.zeros(capacity, dtype=torch.uint8, device=f"cuda:{device}")
                self.bufs.append(t)
                self.addrs.append(t.data_ptr())
            torch.cuda.synchronize(device)
        else:
            self.torch = None
            for _ in range(count):
                b = (ctypes.c_uint8 * capacity)()
                self.bufs.append(b)
                self.addrs.append(ctypes.addressof(b))

    def fill(self):
        """Each region's bytes follow pattern_byte, so a reader can check
        what it got without a copy of the source."""
        for r in range(self.count):
            if self.torch is not None:
                t = self.torch
                idx = t.arange(self.capacity, device=self.bufs[r].device, dtype=t.int64)
                self.bufs[r].copy_(((idx % 251) + r) % 256)
            else:
                chunk = bytes(pattern_byte(i, r) for i in range(251))
                data = (chunk * (self.capacity // 251 + 1))[: self.capacity]
                ctypes.memmove(self.addrs[r], data, self.capacity)
        self.sync()

    def zero(self):
        for r in range(self.count):
            if self.torch is not None:
                self.bufs[r].zero_()
            else:
                ctypes.memset(self.addrs[r], 0, self.capacity)
        self.sync()

    def sync(self):
        if self.torch is not None:
            self.torch.cuda.synchronize(self.device)

    def check(self, block, blocks):
        """The first blocks blocks of every region hold the pattern: the
        request's data arrived. Returns a description of the first
        mismatch, or None."""
        n = block * blocks
        for r in range(self.count):
            if self.torch is not None:
                t = self.torch
                idx = t.arange(n, device=self.bufs[r].device, dtype=t.int64)
                want = (((idx % 251) + r) % 256).to(t.uint8)
                bad = (self.bufs[r][:n] != want).nonzero()
                if bad.numel():
                    i = int(bad[0])
                    return f"region {r} byte {i}: got {int(self.bufs[r][i])}, want {int(want[i])}"
            else:
                got = ctypes.string_at(self.addrs[r], n)
                for i in range(0, n, 4093):  # a stride prime to 251 samples every phase
                    if got[i] != pattern_byte(i, r):
                        return f"region {r} byte {i}: got {got[i]}, want {pattern_byte(i, r)}"
        return None

    def reg_list(self):
        return [(a, self.capacity, self.device, "") for a in self.addrs]



class _DeviceArray:
    """Device memory torch can view without owning it (CUDA array interface)."""

    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (ptr, False), "version": 3}


def driver_tensor(torch, n, device):
    """n zeroed bytes from the CUDA driver's cuMemAlloc, as nixlbench's
    cudaMalloc gives them (one allocation of its own, never a slice of a
    caching allocator's segment), viewed as a torch tensor. Kept for the
    life of the process."""
    torch.cuda.set_device(device)
    torch.zeros(1, device=f"cuda:{device}")  # the device's primary context, current on this thread
    cuda = ctypes.CDLL("libcuda.so.1")
    ptr = ctypes.c_uint64()
    rc = cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(n))
    if rc != 0:
        fail(f"cuMemAlloc_v2 of {n} B on device {device} failed: CUDA error {rc}")
    t = torch.as_tensor(_DeviceArray(ptr.value, n), device=f"cuda:{device}")
    t.zero_()
    return t


def block_descs(addrs, block, blocks, device):
    """One descriptor per block of every region, region-major: vLLM's
    layout (desc id = region * blocks + block)."""
    return [(a + b * block, block, device) for a in addrs for b in range(blocks)]


# ---- versions ------------------------------------------------------------


def nixl_version(nixl):
    try:
        from importlib import metadata
    except ImportError:
        metadata = None
    if metadata is not None:
        for dist in ("nixl", "nixl-cu13", "nixl-cu12", "nixl_cu13", "nixl_cu12"):
            try:
                return metadata.version(dist)
            except Exception:
                pass
    return getattr(nixl, "__version__", "unknown")


def loaded_library(stem):
    """The path of a loaded shared library whose file name starts with stem."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if "/" in path and os.path.basename(path).startswith(stem):
                    return path
    except OSError:
        pass
    return ""


def ucx_version():
    path = loaded_library("libucp.so") or loaded_library("libucp-")  # a wheel's bundled libucp-<hash>.so
    if not path:
        return "not-loaded"
    try:
        fn = ctypes.CDLL(path).ucp_get_version_string
        fn.restype = ctypes.c_char_p
        return fn().decode()
    except (OSError, AttributeError):
        return "unknown"


# ---- the two roles -------------------------------------------------------


def make_agent(args, nixl_api, name):
    # vLLM's NixlConnector takes NIXL's default, a progress thread beside the
    # caller's polling; nixlbench runs without one (--enable_pt=0).
    # --backend-param: the backend made by hand with those parameters (the
    # agent's own config passes none), e.g. UCCL's in_python=0 as nixlbench.
    conf = nixl_api.nixl_agent_config(args.progress_thread, False, 0,
                                      backends=[] if args.backend_param else [args.backend])
    agent = nixl_api.nixl_agent(name, conf)
    plugins = agent.get_plugin_list()
    if args.backend not in plugins:
        fail(f"the image's NIXL has no {args.backend} plugin (it has {','.join(plugins) or 'none'}); "
             f"set NIXL_PLUGIN_DIR to the folder of libplugin_{args.backend}.so or choose a backend it has")
    if args.backend_param:
        agent.create_backend(args.backend, dict(args.backend_param))
    return agent, plugins


def publish(args, agent, regions, role):
    md = {"name": agent.name, "metadata": base64.b64encode(agent.get_agent_metadata()).decode(),
          "regions": regions.addrs, "device": regions.device, "seg": regions.seg,
          "capacity": regions.capacity}
    global lease
    lease = Lease(args.etcd)
    etcd_put(args.etcd, f"{args.key}/{role}", json.dumps(md), lease)


lease = None  # this process's etcd lease, once it has published


def peer(args, role, deadline):
    md = json.loads(etcd_wait(args.etcd, f"{args.key}/{role}", deadline, f"the {role}'s agent metadata"))
    if "failed" in md:
        fail(f"the {role} failed: {md['failed']}")
    return md


def peer_ended(args, role):
    """Why the peer will send no more, or "": its key gone (its lease
    revoked or expired: killed) or saying it failed."""
    try:
        kvs = etcd_call(args.etcd, "/v3/kv/range", {"key": _b64(f"{args.key}/{role}")}, 5).get("kvs") or []
    except ETCD_ERRORS:
        return ""  # etcd slow or gone: not the peer's word
    if not kvs:
        return f"its key {args.key}/{role} is gone"
    try:
        return json.loads(base64.b64decode(kvs[0].get("value", ""))).get("failed", "")
    except ValueError:
        return ""


def say_failed(args, role):
    """Puts why this side failed at its key, under its lease (or, where it
    failed before it published, a lease of its own), which expires TTL
    seconds after this process ends: a peer waiting for it, or for its
    notifications, learns at once. Best effort: etcd may be what failed."""
    try:
        lease_id = lease.id if lease is not None else etcd_call(args.etcd, "/v3/lease/grant", {"TTL": Lease.TTL}, 5)["ID"]
        etcd_call(args.etcd, "/v3/kv/put", {"key": _b64(f"{args.key}/{role}"),
                                           "value": _b64(json.dumps({"failed": failure or "it exited"})),
                                           "lease": lease_id}, 5)
    except ETCD_ERRORS + (KeyError,):
        pass


def run_target(args, nixl_api, banner):
    deadline = time.monotonic() + args.rendezvous_timeout
    regions = Regions(args.target_seg, args.regions, capacity(args), args.device, args.vram_alloc)
    if args.op == "READ":
        regions.fill()  # WRITE: zeros, until the initiator writes
    agent, plugins = make_agent(args, nixl_api, f"{args.name}-target")
    reg = agent.register_memory(regions.reg_list(), args.target_seg, backends=[args.backend])
    print(banner("target", agent, plugins), flush=True)
    publish(args, agent, regions, "target")
    init = peer(args, "initiator", deadline)
    agent.add_remote_agent(base64.b64decode(init["metadata"]))
    print(f"# target: {args.regions} regions of {regions.capacity} B in {args.target_seg} "
          f"(device {args.device}) serve {init['name']}", flush=True)
    end = time.monotonic() + args.time_limit
    notes, look, spins = 0, time.monotonic() + 1, 0
    # Each transfer's flush waits for this loop's get_new_notifs to progress
    # UCX and answer (no progress thread), so a busy-polling target reads the
    # clock only every 256 spins.
    every = 256 if args.busy_poll else 1
    while True:
        spins += 1
        if spins % every == 0:
            now = time.monotonic()
            if now >= end:
                break
            if now > look:
                # The initiator says in its key that it failed, or its key
                # expires (killed): it will send no more.
                why = peer_ended(args, "initiator")
                if why:
                    fail(f"the initiator ended before it was done after {notes} notifications: {why}")
                look = now + 1
        got = agent.get_new_notifs()
        for msgs in got.values():
            notes += len(msgs)
            if DONE in msgs:
                print(f"# target: done after {notes} notifications", flush=True)
                agent.remove_remote_agent(init["name"])
                agent.deregister_memory(reg, backends=[args.backend])
                return
        if not args.busy_poll:
            time.sleep(0.001)  # vLLM reads notifications once per engine step
    fail(f"the initiator did not finish within {args.time_limit:g} s")


def run_initiator(args, nixl_api, banner):
    deadline = time.monotonic() + args.rendezvous_timeout
    tgt = peer(args, "target", deadline)
    regions = Regions(args.initiator_seg, args.regions, capacity(args), args.device, args.vram_alloc)
    if args.op == "WRITE":
        regions.fill()
    agent, plugins = make_agent(args, nixl_api, f"{args.name}-initiator")
    reg = agent.register_memory(regions.reg_list(), args.initiator_seg, backends=[args.backend])
    publish(args, agent, regions, "initiator")
    remote = agent.add_remote_agent(base64.b64decode(tgt["metadata"]))
    if len(tgt["regions"]) != args.regions or tgt["capacity"] < capacity(args):
        fail(f"the target registered {len(tgt['regions'])} regions of {tgt['capacity']} B, "
             f"this initiator needs {args.regions} of {capacity(args)} B: run both with the same sizes")
    calls = binding_calls(agent) if args.as_nixlbench else None  # before any data moves
    print(banner("initiator", agent, plugins), flush=True)
    print_config(args, tgt)
    print_header()
    block, failed = args.min_block, None
    while block <= args.max_block:
        failed = measure(args, agent, remote, regions, tgt, block, calls) or failed
        block *= 2
    print("-" * 160, flush=True)
    agent.send_notif(remote, DONE)
    # The target has read this side's key (it added this agent to take the
    # notifications): once its own key is gone (revoked as it ends), this
    # side's may go too, without a target still to read it.
    etcd_gone(args.etcd, f"{args.key}/target", time.monotonic() + 5)
    agent.remove_remote_agent(remote)
    agent.deregister_memory(reg, backends=[args.backend])
    if failed:
        fail(failed)


def capacity(args):
    return args.max_block * args.blocks


def measure(args, agent, remote, regions, tgt, block, calls=None):
    """One row: block-sized descriptors, regions x blocks of them per
    request. Returns an error text when the data did not arrive."""
    local = agent.prep_xfer_dlist("NIXL_INIT_AGENT", block_descs(regions.addrs, block, args.blocks, regions.device),
                                  args.initiator_seg, backends=[args.backend])
    far = agent.prep_xfer_dlist(remote, block_descs(tgt["regions"], block, args.blocks, tgt["device"]),
                                args.target_seg, backends=[args.backend])
    ids = list(range(args.regions * args.blocks))
    iters = iterations(args, block)
    problem = check_data(args, agent, local, far, ids, remote, regions, block)
    # --reuse-xfer: one prepared transfer, made before the warm-up and posted
    # again with its notification (nixlbench: createXferReq once, its
    # "0xBEEF" notification sent with every post).
    reuse = agent.make_prepped_xfer(args.op, local, ids, far, ids, notif_msg=notif_of(args),
                                    backends=[args.backend]) if args.reuse_xfer else None
    for _ in range(warmups(args, block)):
        request(args, agent, local, far, ids, remote, reuse)
    stamps, total_us = timed_requests(args, agent, local, far, ids, remote, reuse, iters, calls)
    prep, post, tx = spans(stamps)
    if reuse is not None:
        agent.release_xfer_handle(reuse)
    agent.release_dlist_handle(local)
    agent.release_dlist_handle(far)
    batch = len(ids)
    gbs = block * batch * iters / 1e9 / (total_us / 1e6)
    row = [f"{block:<20d}", f"{batch:<15d}", f"{gbs:<15.6f}", f"{total_us / (iters * batch):<15.1f}"]
    for xs in (prep, post, tx):
        row += [f"{avg(xs):<15.1f}", f"{p99(xs):<15.1f}"]
    print("".join(row), flush=True)
    return problem


def check_data(args, agent, local, far, ids, remote, regions, block):
    """One request's data checked; an error text when it did not arrive.
    READ: the target's pattern, read into zeros. WRITE: zeros then the
    pattern written, read back into zeros."""
    if args.op == "WRITE":
        regions.zero()
        request(args, agent, local, far, ids, remote)
        regions.fill()
        request(args, agent, local, far, ids, remote)
    regions.zero()
    request(args, agent, local, far, ids, remote, op="READ")
    regions.sync()
    bad = regions.check(block, args.blocks)
    if args.op == "WRITE":
        regions.fill()
    return f"{args.op} of {block} B blocks: the data did not arrive ({bad})" if bad else None


def request(args, agent, local, far, ids, remote, reuse=None, op=None):
    """One request's transfer, as vLLM's NixlConnector posts it: with a
    notification that tells prefill the blocks may be freed. The warm-up
    and the data check; timed_requests is the timed loop."""
    h = reuse or agent.make_prepped_xfer(op or args.op, local, ids, far, ids, notif_msg=notif_of(args),
                                         backends=[args.backend])
    state = agent.transfer(h)
    while state not in ("DONE", "ERR"):
        state = agent.check_xfer_state(h)
    if reuse is None:
        agent.release_xfer_handle(h)
    if state == "ERR":
        fail(f"{op or args.op} to {remote} failed (NIXL state ERR)")


def timed_requests(args, agent, local, far, ids, remote, reuse, iters, calls=None):
    """The timed loop: iters requests, each as request() posts it. Returns
    four clock readings (ns) a request: before its transfer is made, before
    it is posted, after the post, at DONE; and the loop's total µs. The loop
    does no arithmetic and
    calls nothing it need not: Python's per-request bookkeeping (µs from ns,
    three appends) cost 0.5 µs a transfer on a 2-core VM, against a 1 MiB
    GPU-to-GPU READ of ~22 µs.

    --as-nixlbench calls NIXL's bindings (nixlAgent.postXferReq and
    getXferStatus, the C++ calls nixlbench makes) on the prepared transfer,
    without nixl_agent's wrappers: each check_xfer_state compares NIXL's
    status enum twice more, 1.37 µs a call against 0.46 µs for the binding
    (measured on a 2-core VM), and the poll's period is how late DONE is
    seen. For the same reason the loop compares the status's integer
    (.value: 0.26 µs on that VM, 0.12 on an H200 host) and not the pybind11
    enum itself (==: 1.34 and 0.18 µs, two int conversions through
    pybind11's dispatch). Otherwise nixl_agent's
    transfer and check_xfer_state, as vLLM's NixlConnector calls them."""
    clock = time.perf_counter_ns
    stamps = [0] * (4 * iters)
    if calls is not None:
        post, status, in_prog, success = calls
        handle = getattr(reuse, "_handle", reuse)  # NIXL < 1.0: make_prepped_xfer returns the int itself
        start = clock()
        for i in range(0, 4 * iters, 4):
            t = clock()
            stamps[i] = stamps[i + 1] = t
            state = post(handle).value  # NIXL raises its errors
            stamps[i + 2] = clock()
            while state == in_prog:
                state = status(handle).value
            stamps[i + 3] = clock()
            if state != success:
                fail(f"{args.op} to {remote} failed (NIXL status {state})")
        return stamps, (clock() - start) / 1e3
    make, transfer, check, release = agent.make_prepped_xfer, agent.transfer, agent.check_xfer_state, agent.release_xfer_handle
    op, notif, backends = args.op, notif_of(args), [args.backend]
    start = clock()
    for i in range(0, 4 * iters, 4):
        stamps[i] = clock()
        h = reuse or make(op, local, ids, far, ids, notif_msg=notif, backends=backends)
        stamps[i + 1] = clock()
        state = transfer(h)
        stamps[i + 2] = clock()
        while state != "DONE" and state != "ERR":
            state = check(h)
        stamps[i + 3] = clock()
        if reuse is None:
            release(h)
        if state == "ERR":
            fail(f"{op} to {remote} failed (NIXL state ERR)")
    return stamps, (clock() - start) / 1e3


def binding_calls(agent):
    """--as-nixlbench's calls: NIXL's bindings for posting and polling a
    transfer, and the two statuses, or a failure naming what is missing."""
    try:
        import nixl._bindings as nixl_bind
        # The statuses' integers: the timed loop compares status.value with them.
        in_prog, success = nixl_bind.NIXL_IN_PROG.value, nixl_bind.NIXL_SUCCESS.value
        return agent.agent.postXferReq, agent.agent.getXferStatus, in_prog, success
    except (ImportError, AttributeError) as e:
        fail(f"--as-nixlbench times NIXL's bindings (nixl._bindings, nixl_agent.agent), which this NIXL "
             f"does not have as 1.x has them ({e}): run the test without --as-nixlbench")


def spans(stamps):
    """µs spent making, posting and completing each request, from
    timed_requests' clock readings."""
    prep, post, tx = [], [], []
    for i in range(0, len(stamps), 4):
        t0, t1, t2, t3 = stamps[i:i + 4]
        prep.append((t1 - t0) / 1e3)
        post.append((t2 - t1) / 1e3)
        tx.append((t3 - t2) / 1e3)
    return prep, post, tx


def notif_of(args):
    """The notification each request carries: none (--no-notify), nixlbench's
    (--as-nixlbench) or the probe's."""
    if not args.notify:
        return b""
    return NIXLBENCH_NOTIF if args.as_nixlbench else NOTIF


def iterations(args, block):
    """nixlbench's rule: blocks over 1 MiB get iters / large-block factor."""
    if block > 1 << 20:
        return max(1, args.iters // args.large_block_factor)
    return args.iters


def warmups(args, block):
    """--as-nixlbench: the warm-up too is divided by the large-block factor
    over 1 MiB (nixlbench's rule: 16 warm-up transfers become 1)."""
    if args.as_nixlbench and block > 1 << 20:
        return max(1, args.warmup // args.large_block_factor) if args.warmup else 0
    return args.warmup


def avg(xs):
    return sum(xs) / len(xs) if xs else 0.0


def p99(xs):
    if not xs:
        return 0.0
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * 0.99))]


def print_config(args, tgt):
    batch = args.regions * args.blocks
    rows = [("Backend (--backend)", args.backend), ("Op type (--op_type=[READ,WRITE])", args.op),
            ("Initiator seg type (--initiator_seg_type=[DRAM,VRAM])", args.initiator_seg),
            ("Target seg type (--target_seg_type=[DRAM,VRAM])", args.target_seg),
            ("Regions (--regions=N)", args.regions), ("Blocks per request (--blocks=N)", args.blocks),
            ("Transfer (--reuse-xfer)", "reused" if args.reuse_xfer else "per request (vLLM)"),
            # Named by what is sent (a flag-named row would key the report as no_notify = 1).
            ("Notification per request", notif_of(args).decode() or "none (--no-notify)"),
            ("Start block size (--start_block_size=N)", args.min_block),
            ("Max block size (--max_block_size=N)", args.max_block),
            ("Start batch size (--start_batch_size=N)", batch), ("Max batch size (--max_batch_size=N)", batch),
            ("Num iter (--num_iter=N)", args.iters), ("Warmup iter (--warmup_iter=N)", args.warmup),
            ("Large block iter factor (--large_blk_iter_ftr=N)", args.large_block_factor),
            ("Initiator device (--device=N)", args.device), ("Target device", tgt["device"]),

            ("Check consistency (--check_consistency=[0,1])", 1),
            ("Progress thread", int(args.progress_thread)),  # off: --no-progress-thread
            ("Target polls notifications (--busy-poll)", "without a pause" if args.busy_poll else "every 1 ms"),
            ("Loop (--as-nixlbench)", "nixlbench's" if args.as_nixlbench else "rdmabench's"),
            ("Timed calls", "NIXL's bindings (postXferReq, getXferStatus)" if args.as_nixlbench
             else "nixl_agent (transfer, check_xfer_state)"),
            ("Backend parameters (--backend-param)", ",".join(f"{k}={v}" for k, v in args.backend_param) or "NIXL's defaults")]
    if "VRAM" in (args.initiator_seg, args.target_seg):
        rows += [("VRAM allocation (--vram-alloc)", args.vram_alloc),
                 ("PYTORCH_CUDA_ALLOC_CONF", os.environ.get("PYTORCH_CUDA_ALLOC_CONF") or "(unset)")]
    print("*" * 160)
    print(f"{PROGRAM} Configuration")
    print("*" * 160)
    for label, value in rows:
        print(f"{label:<60}: {value}")
    print("-" * 160)


def print_header():
    cols = ["Block Size (B)", "Batch Size", "B/W (GB/Sec)", "Avg Lat. (us)", "Avg Prep (us)", "P99 Prep (us)",
            "Avg Post (us)", "P99 Post (us)", "Avg Tx (us)", "P99 Tx (us)"]
    print(f"{cols[0]:<20}" + "".join(f"{c:<15}" for c in cols[1:]))
    print("-" * 160, flush=True)


def script_digest():
    """This script's sha256 (12 hex digits): which probe made a capture,
    whatever version it says."""
    import hashlib
    try:
        with open(os.path.abspath(__file__), "rb") as f:
            return "sha256:" + hashlib.sha256(f.read()).hexdigest()[:12]
    except OSError:
        return "unknown"


def banner_maker(args, nixl):
    def banner(role, agent, plugins):
        fields = {"role": role, "nixl": nixl_version(nixl), "ucx": ucx_version(),
                  "backend": args.backend, "plugins": ",".join(plugins) or "none",
                  "python": platform.python_version(), "nixl-path": os.path.dirname(nixl.__file__),
                  "script": script_digest()}
        torch = sys.modules.get("torch")
        if torch is not None:
            fields["torch"] = torch.__version__
            fields["torch-cuda"] = getattr(torch.version, "cuda", None) or "none"
        return f"# {PROGRAM} version {FORMAT_VERSION} " + " ".join(f"{k}={v}" for k, v in fields.items())
    return banner


# The UCX backend's parameters as nixlbench makes it (nixl_worker.cpp):
# num_workers = --num_threads (1) + 1, num_threads = --progress_threads (0).
# NIXL's Python agent passes neither, and gets one UCX worker.
NIXLBENCH_UCX_PARAMS = (("num_workers", "2"), ("num_threads", "0"))


def backend_param(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{text!r}: want KEY=VALUE")
    return key, value


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROGRAM)
    p.add_argument("--role", choices=["target", "initiator"], required=True)
    p.add_argument("--etcd", required=True, help="rdmabench's etcd client URL")
    p.add_argument("--key", required=True, help="etcd key prefix of this pair")
    p.add_argument("--name", default="rdmabench")
    p.add_argument("--backend", default="UCX")
    p.add_argument("--op", choices=["READ", "WRITE"], default="READ")
    p.add_argument("--initiator-seg", choices=["DRAM", "VRAM"], default="DRAM")
    p.add_argument("--target-seg", choices=["DRAM", "VRAM"], default="DRAM")
    p.add_argument("--device", type=int, default=0, help="this side's GPU (VRAM)")
    p.add_argument("--no-progress-thread", dest="progress_thread", action="store_false",
                   help="no NIXL progress thread (nixlbench's default); vLLM's NIXL runs one")
    p.add_argument("--vram-alloc", choices=["torch", "driver"], default=None,
                   help="VRAM from torch's caching allocator (vLLM's KV cache; the default) or the CUDA driver "
                        "(nixlbench's cudaMalloc; the default under --as-nixlbench)")
    p.add_argument("--min-block", type=int, default=65536)
    p.add_argument("--max-block", type=int, default=16 << 20)
    p.add_argument("--regions", type=int, default=1, help="KV regions: layers x K/V")
    p.add_argument("--blocks", type=int, default=1, help="blocks per region in one request")
    p.add_argument("--iters", type=int, default=256)
    p.add_argument("--warmup", type=int, default=16)
    p.add_argument("--large-block-factor", type=int, default=16)
    p.add_argument("--reuse-xfer", action="store_true", help="post one prepared transfer again (nixlbench's way)")
    p.add_argument("--no-notify", dest="notify", action="store_false",
                   help="no notification per request (vLLM and nixlbench send one with each)")
    p.add_argument("--busy-poll", action="store_true",
                   help="the target reads notifications without a pause (nixlbench's target spins; vLLM's reads once a step)")
    p.add_argument("--as-nixlbench", action="store_true",
                   help="nixlbench's loop, like for like: --reuse-xfer --no-progress-thread --busy-poll, nixlbench's "
                        "notification with every post, VRAM from the CUDA driver, NIXL's bindings timed, the warm-up "
                        "divided by the large-block factor over 1 MiB, and UCX made as nixlbench makes it "
                        "(num_workers=2, num_threads=0) unless --backend-param is given")
    p.add_argument("--backend-param", action="append", default=[], metavar="KEY=VALUE", type=backend_param,
                   help="a parameter of the backend's creation (repeatable), e.g. in_python=0 for UCCL as nixlbench")
    p.add_argument("--rendezvous-timeout", type=float, default=120)
    p.add_argument("--time-limit", type=float, default=600)
    a = p.parse_args(argv)
    if a.as_nixlbench:
        if not a.notify:
            fail("--as-nixlbench sends a notification with every post, as nixlbench does: drop --no-notify", 2)
        a.reuse_xfer, a.progress_thread, a.busy_poll = True, False, True
        if a.backend == "UCX" and not a.backend_param:
            a.backend_param = list(NIXLBENCH_UCX_PARAMS)
    if a.vram_alloc is None:
        a.vram_alloc = "driver" if a.as_nixlbench else "torch"
    for name in ("min_block", "max_block", "regions", "blocks", "iters", "large_block_factor"):
        if getattr(a, name) <= 0:
            fail(f"--{name.replace('_', '-')} must be positive", 2)
    for name in ("time_limit", "rendezvous_timeout"):
        if not 0 < getattr(a, name) < float("inf"):
            fail(f"--{name.replace('_', '-')} must be a positive number of seconds, not {getattr(a, name)}", 2)
    if a.warmup < 0 or a.min_block > a.max_block:
        fail("--warmup must be >= 0 and --min-block <= --max-block", 2)
    return a


def main(argv):
    # A crash inside NIXL or a plugin (a segfault) names the Python line
    # that called it, on stderr, which rdmabench keeps.
    faulthandler.enable()
    args = parse_args(argv)  # a bad command line exits 2 here, with no word to the peer
    done = False
    try:
        run(args)
        done = True
    except Exception as e:  # NIXL raises its errors (nixlBackendError, ...) as exceptions
        fail(f"{args.role}: {type(e).__name__}: {e}")
    finally:
        if done:
            if lease is not None:
                lease.revoke()  # this side's key goes with it
        else:
            say_failed(args, args.role)  # the peer reads why; the key expires with its lease


def run(args):
    try:
        import nixl
        import nixl._api as nixl_api
    except ImportError as e:
        fail(f"{sys.executable} cannot import nixl ({e}): run with the python3 of an image that has NIXL's "
             "Python package (vLLM's and llm-d's do), or set RDMABENCH_PYTHON")
    if "VRAM" in (args.initiator_seg, args.target_seg):
        try:
            import torch  # noqa: F401  (VRAM regions are torch tensors, as vLLM's KV cache)
        except ImportError as e:
            fail(f"VRAM needs torch in {sys.executable} ({e})")
    banner = banner_maker(args, nixl)
    if args.role == "target":
        run_target(args, nixl_api, banner)
    else:
        run_initiator(args, nixl_api, banner)


if __name__ == "__main__":
    main(sys.argv[1:])
