# rdmabench's DeepEP probe: the expert-parallel dispatch and combine of
# WideEP serving, driven through DeepEP V1's Python API (deep_ep.Buffer) the
# way vLLM's two DeepEP all2all backends drive it, with the python3, torch
# and deep_ep of the image that serves.
#
#   normal       vLLM's deepep_high_throughput (prefill-sized batches):
#                get_dispatch_layout, dispatch, combine; intranode when every
#                rank shares one NVLink domain, internode (NVSHMEM) otherwise
#   low_latency  vLLM's deepep_low_latency (decode-sized batches):
#                low_latency_dispatch, low_latency_combine (NVSHMEM, IBGDA
#                where there is a NIC, NVLink P2P where allowed)
#
# Launched without MPI through torch.distributed's env contract: MASTER_ADDR,
# MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK (one process per GPU). Tokens are
# synthetic, shaped as the model's (hidden, top-k, experts); every kernel set
# is checked once for correctness as DeepEP's own tests check it, then timed
# as DeepEP's bench times it (CUDA events around each call after warm-up and
# an L2 flush, the first timed call dropped); the low-latency pair is timed
# apart and back to back (DeepEP's "Dispatch + combine"); bytes are counted
# as DeepEP's tests count them, so that the figures sit beside theirs.
#
# Rank 0 prints every rank's result lines (gathered over torch.distributed);
# the other ranks print only their failures. Exit status: 0 measured, 1
# failed (a line "rdmabench-deepep: ..." says what), 2 bad arguments.

import argparse
import datetime
import os
import platform
import sys
import time

PROGRAM = "rdmabench-deepep"
FORMAT_VERSION = "1"
FP8_FACTOR = (1 + 4 / 128) / 2  # FP8 bytes per BF16 byte, with one fp32 scale per 128 channels (DeepEP's tests)
NUM_MAX_NVL_PEERS = 8  # DeepEP V1: ranks beyond 8 are other RDMA ranks (csrc/kernels/configs.cuh)


def fail(msg, code=1):
    print(f"{PROGRAM}: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


class ProbeError(Exception):
    """A failure the probe names: a check that did not hold, a kernel set
    that cannot run with these shapes."""


# ---- the env contract ----------------------------------------------------


def env_contract():
    """MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK: all of them,
    or a failure naming the missing ones."""
    names = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")
    missing = [n for n in names if not os.environ.get(n)]
    if missing:
        fail(f"{', '.join(missing)} not set: run one process per GPU with torch.distributed's env contract "
             "(rdmabench sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK)", 2)
    try:
        rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ["LOCAL_RANK"])
    except ValueError as e:
        fail(f"RANK, WORLD_SIZE and LOCAL_RANK must be integers ({e})", 2)
    if not 0 <= rank < world or local < 0:
        fail(f"RANK {rank} is not in 0..WORLD_SIZE-1 ({world}), or LOCAL_RANK {local} < 0", 2)
    return rank, world, local


# ---- versions and NVSHMEM's evidence --------------------------------------


def dist_version(*names):
    try:
        from importlib import metadata
    except ImportError:
        return ""
    for n in names:
        try:
            return metadata.version(n)
        except Exception:
            pass
    return ""


def loaded_libraries(stem):
    """File names of loaded shared libraries whose name starts with stem
    (NVSHMEM's host library and the transports it loaded)."""
    found = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                name = os.path.basename(path)
                if "/" in path and name.startswith(stem) and name not in found:
                    found.append(name)
    except OSError:
        pass
    return found


def deep_ep_api(deep_ep):
    """V1 (legacy, NVSHMEM) or V2 (elastic, NCCL GIN), as the package shows
    itself: V2 added ElasticBuffer beside the legacy Buffer."""
    if hasattr(deep_ep, "ElasticBuffer"):
        return "V2"
    if hasattr(deep_ep, "Buffer") and hasattr(deep_ep.Buffer, "low_latency_dispatch"):
        return "V1"
    return "unknown"


def banner(torch, deep_ep, ctx):
    nccl = ""
    try:
        v = torch.cuda.nccl.version()
        nccl = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    except Exception:
        nccl = "unknown"
    fields = {
        "deep_ep": dist_version("deep_ep", "deep-ep") or getattr(deep_ep, "__version__", "unknown"),
        "deep_ep-api": ctx["api"], "torch": torch.__version__,
        "torch-cuda": getattr(torch.version, "cuda", None) or "none", "nccl-version": nccl,
        "nvshmem": dist_version("nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12") or "unknown",
        "python": platform.python_version(), "ranks": ctx["world"], "hosts": ctx["hosts"],
        "gpu": torch.cuda.get_device_name(ctx["local"]).replace(" ", "_"),
        "deep_ep-path": os.path.dirname(getattr(deep_ep, "__file__", "") or "") or "unknown",
    }
    return f"# {PROGRAM} version {FORMAT_VERSION} " + " ".join(f"{k}={v}" for k, v in fields.items())


# ---- timing, as DeepEP's tests/utils.py bench ------------------------------


def bench(torch, fns, warmup, iterations):
    """Times each of fns, called in turn per iteration, with CUDA events:
    warm-up calls, an L2 flush (256 MB), then iterations+1 timed rounds of
    which the first is dropped. Returns per fn (avg, min, max) seconds."""
    torch.cuda.synchronize()
    cache = torch.empty(int(256e6 // 4), dtype=torch.int, device="cuda")
    for _ in range(warmup):
        for fn in fns:
            fn()
    cache.zero_()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in fns]
              for _ in range(iterations + 1)]
    for row in events:
        for fn, (start, end) in zip(fns, row):
            start.record()
            fn()
            end.record()
    torch.cuda.synchronize()
    out = []
    for i in range(len(fns)):
        ts = [row[i][0].elapsed_time(row[i][1]) / 1e3 for row in events[1:]]
        out.append((sum(ts) / len(ts), min(ts), max(ts)))
    return out


def calc_diff(x, y):
    """DeepEP's similarity measure: 0 when x equals y (shifted by one so
    that zeros compare)."""
    x, y = x.double() + 1, y.double() + 1
    return (1 - 2 * (x * y).sum() / (x * x + y * y).sum()).item()


def cast_to_fp8(torch, x):
    """Per-token, per-128-channel FP8 (e4m3) with fp32 scales: the input
    DeepEP's FP8 dispatch takes. Scales are column-major, as its tests pass them."""
    m, n = x.shape
    v = x.view(m, -1, 128)
    amax = v.abs().float().amax(dim=2).clamp(1e-4)
    q = (v * (448.0 / amax.unsqueeze(2))).to(torch.float8_e4m3fn).view(m, n)
    scales = (amax / 448.0).view(m, -1)
    return q, scales.T.contiguous().T


def cast_back(torch, q, scales):
    """FP8 with fp32 scales back to BF16, per 128 channels."""
    if q.numel() == 0:
        return q.to(torch.bfloat16)
    m, n = q.shape
    return (q.float().view(m, -1, 128) * scales.float().view(m, -1, 1)).view(m, n).to(torch.bfloat16)


def expect(ok, what):
    if not ok:
        raise ProbeError(what)


# ---- the two kernel sets -------------------------------------------------


class Real:
    """DeepEP V1 itself: each run_* function returns this rank's results,
    one dict per kernel phase."""

    def __init__(self, torch, deep_ep, dist, group, ctx, args):
        self.torch, self.deep_ep, self.dist, self.group, self.ctx, self.args = torch, deep_ep, dist, group, ctx, args
        torch.manual_seed(ctx["rank"])  # each rank routes its own tokens, as DeepEP's tests seed them

    def agree(self, check):
        """Runs check on every rank and lets all of them know whether any
        failed: the kernels after it are collective, and a rank that stopped
        alone would leave the others waiting inside DeepEP."""
        try:
            check()
            problem = None
        except ProbeError as e:
            problem = str(e)
        every = [None] * self.ctx["world"]
        self.dist.all_gather_object(every, problem, group=self.group)
        bad = [f"rank {r}: {p}" for r, p in enumerate(every) if p]
        if bad:
            raise ProbeError("check failed: " + "; ".join(bad))

    def routing(self, tokens, mask_some):
        """Random scores, top-k experts per token (DeepEP's tests' routing);
        mask_some drops a few selections to -1, as the low-latency test does."""
        t, a = self.torch, self.args
        scores = t.randn((tokens, a.experts), dtype=t.float32, device="cuda").abs() + 1
        idx = t.topk(scores, a.topk, dim=-1, largest=True, sorted=False)[1].to(self.deep_ep.topk_idx_t)
        if mask_some:
            g = t.Generator(device="cpu").manual_seed(self.ctx["rank"])
            rows = t.randint(0, tokens, (10,), generator=g)
            cols = t.randint(0, a.topk, (10,), generator=g)
            idx[rows.to("cuda"), cols.to("cuda")] = -1
        return idx

    def run_normal(self):
        a, ctx = self.args, self.ctx
        world, hosts = ctx["world"], ctx["hosts"]
        # DeepEP V1 counts ranks in NVLink domains of 8 GPUs: up to 8 ranks are
        # one domain (intranode), more are RDMA ranks of 8 each (internode).
        rdma_ranks = max(1, world // NUM_MAX_NVL_PEERS)
        if hosts > 1 and (world <= NUM_MAX_NVL_PEERS or world != hosts * NUM_MAX_NVL_PEERS):
            raise ProbeError(f"{world} ranks on {hosts} hosts: DeepEP V1's normal kernels need every rank in one NVLink "
                             f"domain (one host, up to {NUM_MAX_NVL_PEERS} GPUs) or {NUM_MAX_NVL_PEERS} GPUs on every host")
        path = "internode" if rdma_ranks > 1 else "intranode"
        # vLLM's DeepEPHTAll2AllManager: NVLink buffer of VLLM_DEEPEP_BUFFER_SIZE_MB
        # (1 GiB), an RDMA buffer of the same only internode, QPs = SMs / 2;
        # more where DeepEP's default configs need more at this hidden size.
        Buffer = self.deep_ep.Buffer
        Buffer.set_num_sms(a.sms)
        configs = (Buffer.get_dispatch_config(world), Buffer.get_combine_config(world))  # unsupported rank counts fail here
        nvl = max([a.buffer_mb << 20] + [c.get_nvl_buffer_size_hint(a.hidden * 2, world) for c in configs])
        rdma = max([a.buffer_mb << 20] + [c.get_rdma_buffer_size_hint(a.hidden * 2, world) for c in configs]) if rdma_ranks > 1 else 0
        buffer = Buffer(self.group, nvl, rdma, low_latency_mode=False,
                        num_qps_per_rank=max(1, a.sms // 2) if rdma_ranks > 1 else 1, explicitly_destroy=True)
        try:
            return self.normal_steps(buffer, path, rdma_ranks)
        finally:
            self.dist.barrier(group=self.group)
            buffer.destroy()

    def normal_steps(self, buffer, path, rdma_ranks):
        t, dist, a, ctx = self.torch, self.dist, self.args, self.ctx
        world, rank, tokens = ctx["world"], ctx["rank"], a.tokens
        if a.experts % world:
            raise ProbeError(f"{a.experts} experts do not divide over {world} ranks")
        # x is this rank's number in every channel: a receiver can tell each
        # token's source, and a combine's sum over k copies is k x the source.
        x = t.ones((tokens, a.hidden), dtype=t.bfloat16, device="cuda") * rank
        topk_idx = self.routing(tokens, False)
        weights = t.ones((tokens, a.topk), dtype=t.float32, device="cuda")
        per_rank, per_rdma, per_expert, in_rank, _ = buffer.get_dispatch_layout(topk_idx, a.experts)
        # The layout against our own count of it.
        owner = (topk_idx // (a.experts // world)).long()
        # (a masked selection, -1, goes to a spare column dropped after)
        mine = t.zeros((tokens, world + 1), dtype=t.bool, device="cuda")
        mine.scatter_(1, owner.masked_fill(owner < 0, world), t.ones_like(owner, dtype=t.bool))
        mine = mine[:, :world].contiguous()

        def check_layout():
            expect(t.equal(in_rank, mine), "get_dispatch_layout: is_token_in_rank differs from the routing")
            expect(t.equal(per_rank.long(), mine.sum(0)), "get_dispatch_layout: num_tokens_per_rank differs from the routing")
            expect(t.equal(per_expert.long(), t.bincount(topk_idx[topk_idx >= 0].long(), minlength=a.experts)),
                   "get_dispatch_layout: num_tokens_per_expert differs from the routing")
        self.agree(check_layout)
        every = [t.zeros_like(per_rank) for _ in range(world)]
        dist.all_gather(every, per_rank, group=self.group)
        sent_to_me = [int(v[rank]) for v in every]
        gbl_expert = per_expert.clone()
        dist.all_reduce(gbl_expert, group=self.group)
        local_experts = a.experts // world
        send_x = cast_to_fp8(t, x) if a.dtype == "fp8" else x
        step = dict(x=send_x, num_tokens_per_rank=per_rank, num_tokens_per_rdma_rank=per_rdma, is_token_in_rank=in_rank,
                    num_tokens_per_expert=per_expert, topk_idx=topk_idx, topk_weights=weights)
        recv_x, recv_idx, _, recv_per_expert, handle, _ = buffer.dispatch(**step)
        recv = cast_back(t, *recv_x) if isinstance(recv_x, tuple) else recv_x

        def check_dispatch():
            """DeepEP's dispatch checks: the count, each expert's count, each
            row whole and from the rank that sent it."""
            expect(recv.size(0) == sum(sent_to_me), f"dispatch: received {recv.size(0)} tokens, the ranks sent {sum(sent_to_me)}")
            expect(list(recv_per_expert) == gbl_expert.view(world, -1)[rank].tolist(), "dispatch: tokens per local expert differ")
            expect(bool(t.equal(recv.amin(dim=1), recv.amax(dim=1))), "dispatch: a received token is not whole")
            got = recv[:, 0].float()
            for src in range(world):
                n = int((got == src).sum())
                expect(n == sent_to_me[src], f"dispatch: {n} tokens from rank {src}, it sent {sent_to_me[src]}")
            ok_idx = (recv_idx.eq(-1) | ((recv_idx >= 0) & (recv_idx < local_experts))).all()
            expect(bool(ok_idx), "dispatch: a received top-k index is outside this rank's experts")
            for e, n in enumerate(recv_per_expert):
                got_n = int(recv_idx.eq(e).sum())
                expect(got_n == n, f"dispatch: local expert {e} has {got_n} top-k entries, want {n}")
        self.agree(check_dispatch)
        combined, _, _ = buffer.combine(recv, handle)

        def check_combine():
            diff = calc_diff(combined.float() / in_rank.sum(dim=1, keepdim=True), x)
            expect(diff < 5e-6, f"combine: the sum over each token's copies is off (diff {diff:.3g}, DeepEP's bound 5e-6)")
        self.agree(check_combine)
        # Timed: the cached dispatch (the layout reused through the handle)
        # and the combine, each on its own, as DeepEP's tuning times them.
        (d_avg, d_min, d_max), = bench(t, [lambda: buffer.dispatch(x=send_x, handle=handle)], a.warmup, a.iterations)
        (c_avg, c_min, c_max), = bench(t, [lambda: buffer.combine(recv, handle)], a.warmup, a.iterations)
        nvl = recv.size(0) * a.hidden * 2
        rdma = 0
        if rdma_ranks > 1:
            nodes = mine.view(tokens, rdma_ranks, -1).any(dim=2)
            rdma = int(nodes.sum()) * a.hidden * 2  # DeepEP's num_rdma_token_sent x hidden x 2
        factor = FP8_FACTOR if a.dtype == "fp8" else 1.0
        common = dict(kernels="normal", path=path, tokens=tokens, recv_tokens=recv.size(0))
        return [dict(common, phase="dispatch", dtype=a.dtype, avg=d_avg, min=d_min, max=d_max,
                     nvl_bytes=int(nvl * factor), rdma_bytes=int(rdma * factor)),
                dict(common, phase="combine", dtype="bf16", avg=c_avg, min=c_min, max=c_max, nvl_bytes=nvl, rdma_bytes=rdma)]

    def run_low_latency(self):
        a, ctx = self.args, self.ctx
        world = ctx["world"]
        if a.experts % world:
            raise ProbeError(f"{a.experts} experts do not divide over {world} ranks")
        # vLLM's DeepEPLLAll2AllManager: DeepEP's size hint, QPs = local experts,
        # NVLink allowed between the GPUs of a host.
        size = self.deep_ep.Buffer.get_low_latency_rdma_size_hint(a.ll_tokens, a.hidden, world, a.experts)
        buffer = self.deep_ep.Buffer(self.group, 0, size, low_latency_mode=True, num_qps_per_rank=a.experts // world,
                                     allow_nvlink_for_low_latency_mode=True, explicitly_destroy=True)
        try:
            return self.ll_steps(buffer)
        finally:
            self.dist.barrier(group=self.group)
            buffer.destroy()

    def ll_steps(self, buffer):
        t, dist, a, ctx = self.torch, self.dist, self.args, self.ctx
        world, rank, tokens = ctx["world"], ctx["rank"], a.ll_tokens
        local_experts = a.experts // world
        fp8 = a.dtype == "fp8"
        # DeepEP's low-latency test data: rank - 128 in every channel but the
        # last 128, which hold the token's index.
        x = t.ones((tokens, a.hidden), dtype=t.bfloat16, device="cuda") * (rank - 128)
        x[:, -128:] = t.arange(tokens, device="cuda").to(t.bfloat16).view(-1, 1)
        topk_idx = self.routing(tokens, True)
        weights = t.randn((tokens, a.topk), dtype=t.float32, device="cuda").abs()
        every = t.empty((world, tokens, a.topk), dtype=topk_idx.dtype, device="cuda")
        dist.all_gather_into_tensor(every, topk_idx, group=self.group)
        recv_x, recv_count, handle, _, _ = buffer.low_latency_dispatch(x, topk_idx, tokens, a.experts, use_fp8=fp8)
        packed = cast_back(t, recv_x[0].view(-1, a.hidden), recv_x[1].contiguous().view(-1, a.hidden // 128)).view(
            recv_x[0].shape) if fp8 else recv_x.clone()  # the receive buffer is reused by the next dispatch

        def check_dispatch():
            """DeepEP's checks: each local expert's count against every rank's
            routing, each token whole and from the rank that routed it."""
            for i in range(local_experts):
                expert = rank * local_experts + i
                n = int(recv_count[i])
                want = int((every == expert).sum())
                expect(n == want, f"low_latency_dispatch: expert {expert} received {n} tokens, the ranks routed {want}")
                body = packed[i, :n, :-128]
                expect(bool(t.equal(body.amin(dim=-1), body.amax(dim=-1))), f"low_latency_dispatch: a token of expert {expert} is not whole")
                for src in range(world):
                    m, w = int((body[:, 0] == src - 128).sum()), int((every[src] == expert).sum())
                    expect(m == w, f"low_latency_dispatch: expert {expert} got {m} tokens from rank {src}, it routed {w}")
        self.agree(check_dispatch)
        combined, _, _ = buffer.low_latency_combine(packed, topk_idx, weights, handle)

        def check_combine():
            ref = x * weights.masked_fill(topk_idx == -1, 0).sum(dim=1).view(-1, 1)
            diff = calc_diff(ref, combined)
            bound = 9e-4 if fp8 else 1e-5  # DeepEP's test_low_latency bounds
            expect(not bool(t.isnan(combined).any()) and diff < bound,
                   f"low_latency_combine: the weighted sum is off (diff {diff:.3g}, DeepEP's bound {bound:g})")
        self.agree(check_combine)
        # Timed in turn, as a decode step runs them (DeepEP's bench times the
        # pair: our dispatch + combine is its "Dispatch + combine").
        h = {}

        def dispatch():
            h["recv"], _, h["handle"], _, _ = buffer.low_latency_dispatch(x, topk_idx, tokens, a.experts, use_fp8=fp8)

        def combine():
            buffer.low_latency_combine(packed, topk_idx, weights, h["handle"])

        def pair():
            dispatch()
            combine()

        (d_avg, d_min, d_max), (c_avg, c_min, c_max) = bench(t, [dispatch, combine], a.warmup, a.iterations)
        # And the pair in one window, back to back as a decode step runs it
        # and as DeepEP's test times its "Dispatch + combine": the gap
        # between the two kernels (the combine's launch) counts here, not in
        # the two apart. The EP budget takes this one.
        (p_avg, p_min, p_max), = bench(t, [pair], a.warmup, a.iterations)
        selections = int((topk_idx != -1).sum())
        per = (a.hidden + a.hidden / 128 * 4 + 16) if fp8 else a.hidden * 2  # DeepEP's num_fp8_bytes / num_bf16_bytes
        d_bytes, c_bytes = int(per * selections), a.hidden * 2 * selections
        common = dict(kernels="low_latency", path="nvshmem", tokens=tokens, recv_tokens=int(recv_count.sum()), rdma_bytes=0)
        return [dict(common, phase="dispatch", dtype=a.dtype, avg=d_avg, min=d_min, max=d_max, nvl_bytes=d_bytes),
                dict(common, phase="combine", dtype="bf16", avg=c_avg, min=c_min, max=c_max, nvl_bytes=c_bytes),
                dict(common, phase="dispatch+combine", dtype=a.dtype, avg=p_avg, min=p_min, max=p_max,
                     nvl_bytes=d_bytes + c_bytes)]


# ---- output --------------------------------------------------------------


def result_line(rank, r):
    """One phase of one rank. Bytes and GB/s are split NVL / RDMA where
    DeepEP splits them (normal kernels); low-latency bytes are its total
    (bytes=, GB/s), whatever path NVSHMEM took."""
    avg = r["avg"]
    head = f"[rank {rank}] {PROGRAM} {r['kernels']} {r['phase']} ({r['dtype'].upper()}): "
    times = f"avg_t={avg * 1e6:.2f} us, min_t={r['min'] * 1e6:.2f} us, max_t={r['max'] * 1e6:.2f} us"
    if r["kernels"] == "normal":
        rates = (f"{r['rdma_bytes'] / 1e9 / avg:.2f} GB/s (RDMA), {r['nvl_bytes'] / 1e9 / avg:.2f} GB/s (NVL), "
                 f"{r['rdma_bytes']} bytes (RDMA), {r['nvl_bytes']} bytes (NVL)")
    else:
        rates = f"{r['nvl_bytes'] / 1e9 / avg:.2f} GB/s, {r['nvl_bytes']} bytes"
    return f"{head}{rates}, {times}, path={r['path']}, tokens={r['tokens']}, recv_tokens={r['recv_tokens']}, check=passed"


def report(dist, group, ctx, results):
    """Rank 0 prints every rank's lines; a rank's failure reaches rank 0 as
    text, so that the parsed output names it."""
    gathered = [None] * ctx["world"]
    dist.all_gather_object(gathered, results, group=group)
    if ctx["rank"] == 0:
        said = []
        for rank, rs in enumerate(gathered):
            if not isinstance(rs, str):
                for r in rs:
                    print(result_line(rank, r), flush=True)
            elif rs not in said:  # a failure all ranks agreed on is said once
                said.append(rs)
                print(f"{PROGRAM}: {rs}", file=sys.stderr, flush=True)
    return any(isinstance(rs, str) for rs in gathered)


# ---- main ----------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(prog=PROGRAM)
    p.add_argument("--mode", choices=["normal", "low_latency", "both"], default="both")
    p.add_argument("--hidden", type=int, default=7168)
    p.add_argument("--topk", type=int, default=8)
    p.add_argument("--experts", type=int, default=256)
    p.add_argument("--tokens", type=int, default=4096, help="tokens per rank, normal kernels (prefill)")
    p.add_argument("--ll-tokens", type=int, default=128, help="tokens per rank, low-latency kernels (decode)")
    p.add_argument("--dtype", choices=["fp8", "bf16"], default="fp8", help="dispatch's data type (combine is BF16)")
    p.add_argument("--sms", type=int, default=20, help="SMs of the normal kernels (vLLM: 20; DeepEP's tests: 24)")
    p.add_argument("--buffer-mb", type=int, default=1024, help="normal kernels' buffers (vLLM's VLLM_DEEPEP_BUFFER_SIZE_MB)")
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--rendezvous-timeout", type=float, default=120)
    p.add_argument("--time-limit", type=float, default=600, help="the Go launcher's watchdog reads it")
    a = p.parse_args(argv)
    for name in ("hidden", "topk", "experts", "tokens", "ll_tokens", "sms", "buffer_mb", "iterations"):
        if getattr(a, name) <= 0:
            fail(f"--{name.replace('_', '-')} must be positive", 2)
    if a.warmup < 0 or a.hidden % 128 or a.sms % 2:
        fail("--warmup must be >= 0, --hidden a multiple of 128 (FP8 scales per 128 channels), --sms even", 2)
    if a.topk > a.experts:
        fail(f"--topk {a.topk} is more than --experts {a.experts}", 2)
    return a


def start(args, rank, world, local):
    """torch, deep_ep and the process group, or a failure naming which."""
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:
        fail(f"{sys.executable} cannot import torch ({e}): run with the serving image's python3, or set RDMABENCH_PYTHON")
    try:
        import deep_ep
    except ImportError as e:
        fail(f"{sys.executable} cannot import deep_ep ({e}): use an image with DeepEP (llm-d's has it), or set RDMABENCH_PYTHON")
    api = deep_ep_api(deep_ep)
    if api == "V2":
        fail("deep_ep here is DeepEP V2 (ElasticBuffer over NCCL's GPU-initiated networking, NCCL 2.30.4+): this probe "
             "drives V1's NVSHMEM Buffer, as vLLM's deepep_high_throughput and deepep_low_latency do")
    if api != "V1":
        fail(f"deep_ep at {getattr(deep_ep, '__file__', '?')} has no V1 Buffer with low_latency_dispatch")
    if local >= torch.cuda.device_count():
        fail(f"LOCAL_RANK {local} but this host shows {torch.cuda.device_count()} GPU(s) (CUDA_VISIBLE_DEVICES?)")
    torch.cuda.set_device(local)
    t0 = time.monotonic()
    try:
        dist.init_process_group(backend="nccl", init_method="env://", world_size=world, rank=rank,
                                timeout=datetime.timedelta(seconds=args.rendezvous_timeout),
                                device_id=torch.device(f"cuda:{local}"))
    except Exception as e:
        fail(f"rendezvous at {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} as rank {rank} of {world} "
             f"failed after {time.monotonic() - t0:.1f} s: {type(e).__name__}: {e}")
    group = dist.new_group(list(range(world)))
    return torch, dist, deep_ep, group, api


def hosts_of(dist, group, world):
    names = [None] * world
    dist.all_gather_object(names, platform.node(), group=group)
    return len(set(names))


def find():
    """What preflight reads (rdmabench-deepep --find), one key=value a
    line, without a GPU: torch, its CUDA and NCCL, NVSHMEM's wheel, deep_ep
    and its API. Importing deep_ep loads its extension, which links
    libcuda: an image without the driver says so here."""
    print("python-version=" + platform.python_version())
    try:
        import torch
    except Exception as e:
        print("torch=notfound\ntorch-error=" + str(e).replace("\n", " "))
        return
    print(f"torch={torch.__version__}\ntorch-cuda={torch.version.cuda}")
    try:
        v = torch.cuda.nccl.version()
        print("nccl=" + (".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)))
    except Exception:
        print("nccl=unknown")
    print("nvshmem=" + (dist_version("nvidia-nvshmem-cu13", "nvidia-nvshmem-cu12") or "unknown"))
    try:
        import deep_ep
    except Exception as e:
        print("deep_ep=notfound\ndeep_ep-error=" + str(e).replace("\n", " "))
        return
    print("deep_ep=" + os.path.dirname(getattr(deep_ep, "__file__", "") or ""))
    print("deep_ep-version=" + (dist_version("deep_ep", "deep-ep") or getattr(deep_ep, "__version__", "") or "unknown"))
    print("deep_ep-api=" + deep_ep_api(deep_ep))


def main(argv):
    if argv == ["--find"]:
        find()
        return
    args = parse_args(argv)
    rank, world, local = env_contract()
    torch, dist, deep_ep, group, api = start(args, rank, world, local)
    ctx = {"rank": rank, "world": world, "local": local, "api": api, "hosts": hosts_of(dist, group, world)}
    if rank == 0:
        print(banner(torch, deep_ep, ctx), flush=True)
        print(f"# config: mode={args.mode} hidden={args.hidden} topk={args.topk} experts={args.experts} "
              f"tokens={args.tokens} ll-tokens={args.ll_tokens} dtype={args.dtype} sms={args.sms} "
              f"warmup={args.warmup} iterations={args.iterations}", flush=True)
    # A stand-in deep_ep (CI, no GPU) brings its own kernel part; the real
    # one is DeepEP itself.
    kernels = getattr(deep_ep, "RDMABENCH_STANDIN", None)
    kernels = kernels(torch, deep_ep, dist, group, ctx, args) if kernels else Real(torch, deep_ep, dist, group, ctx, args)
    failed = False
    for mode, run in (("normal", kernels.run_normal), ("low_latency", kernels.run_low_latency)):
        if args.mode not in (mode, "both"):
            continue
        try:
            results = run()
        except ProbeError as e:
            results = f"{mode}: {e}"
        except Exception as e:  # DeepEP raises its asserts and CUDA errors as exceptions
            results = f"{mode}: rank {rank}: {type(e).__name__}: {e}"
        if rank == 0 and mode == "low_latency":
            nv = loaded_libraries("libnvshmem") + loaded_libraries("nvshmem_transport")
            print(f"# nvshmem: loaded {','.join(nv) or 'none'}", flush=True)
        failed = report(dist, group, ctx, results) or failed
    dist.barrier(group=group)
    dist.destroy_process_group()
    if failed:
        fail("a kernel set failed (the lines above name it)" if rank == 0 else "see rank 0's output")


if __name__ == "__main__":
    main(sys.argv[1:])
