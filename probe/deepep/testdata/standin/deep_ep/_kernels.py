# The stand-in's kernel part: dispatch sends each token to the ranks owning
# its top-k experts, combine sends them back, as DeepEP's kernels do, but as
# bytes through torch.distributed's object collectives; bytes are counted
# as DeepEP's tests count them, times are the exchanges' wall clock.
import os
import random
import time

FP8_FACTOR = (1 + 4 / 128) / 2


class Kernels:
    def __init__(self, torch, deep_ep, dist, group, ctx, args):
        self.dist, self.group, self.ctx, self.args = dist, group, ctx, args

    def _maybe_fail(self, mode):
        if os.environ.get("RDMABENCH_STANDIN_FAIL") == mode:
            raise RuntimeError(f"stand-in told to fail the {mode} kernels")
        if mode == "normal" and os.environ.get("RDMABENCH_STANDIN_HANG"):
            time.sleep(3600)

    def _routing(self, tokens, per_selection):
        """Per destination rank, how many of this rank's tokens go there:
        once per rank (normal kernels) or once per selected expert (low
        latency)."""
        a, world = self.args, self.ctx["world"]
        rnd = random.Random(self.ctx["rank"])
        per_rank_experts = a.experts // world
        count = [0] * world
        for _ in range(tokens):
            owners = [e // per_rank_experts for e in rnd.sample(range(a.experts), a.topk)]
            for r in (owners if per_selection else set(owners)):
                count[r] += 1
        return count

    def _exchange(self, sizes):
        """Sends sizes[r] bytes to every rank r; returns the bytes received
        and the seconds it took, after checking each source's amount."""
        world, me = self.ctx["world"], self.ctx["rank"]
        t0 = time.perf_counter()
        out = [None] * world
        self.dist.all_gather_object(out, {r: bytes(n) for r, n in enumerate(sizes)}, group=self.group)
        took = time.perf_counter() - t0
        got = 0
        for src in range(world):
            got += len(out[src][me])
        return got, took

    def _phase(self, sizes, iterations):
        times, got = [], 0
        for _ in range(iterations):
            got, took = self._exchange(sizes)
            times.append(took)
        return got, (sum(times) / len(times), min(times), max(times))

    def _result(self, kernels, phase, dtype, timing, nvl, rdma, path, tokens, recv_tokens):
        avg, lo, hi = timing
        return dict(kernels=kernels, phase=phase, dtype=dtype, avg=avg, min=lo, max=hi, nvl_bytes=nvl, rdma_bytes=rdma,
                    path=path, tokens=tokens, recv_tokens=recv_tokens)

    def run_normal(self):
        self._maybe_fail("normal")
        a = self.args
        iters = min(a.iterations, 3)
        count = self._routing(a.tokens, False)
        factor = FP8_FACTOR if a.dtype == "fp8" else 1.0
        got, d = self._phase([int(n * a.hidden * 2 * factor) for n in count], iters)
        recv_tokens = int(round(got / (a.hidden * 2 * factor)))
        _, c = self._phase([n * a.hidden * 2 for n in count], iters)
        path = "intranode" if self.ctx["world"] <= 8 else "internode"
        nvl = recv_tokens * a.hidden * 2
        return [self._result("normal", "dispatch", a.dtype, d, int(nvl * factor), 0, path, a.tokens, recv_tokens),
                self._result("normal", "combine", "bf16", c, nvl, 0, path, a.tokens, recv_tokens)]

    def run_low_latency(self):
        self._maybe_fail("low_latency")
        a = self.args
        iters = min(a.iterations, 3)
        count = self._routing(a.ll_tokens, True)
        per = (a.hidden + a.hidden / 128 * 4 + 16) if a.dtype == "fp8" else a.hidden * 2
        got, d = self._phase([int(n * per) for n in count], iters)
        _, c = self._phase([n * a.hidden * 2 for n in count], iters)
        selections = sum(count)
        # The pair back to back: the two exchanges timed in one window.
        _, p = self._phase([int(n * per) + n * a.hidden * 2 for n in count], iters)
        recv = int(round(got / per))
        return [self._result("low_latency", "dispatch", a.dtype, d, int(per * selections), 0, "nvshmem", a.ll_tokens, recv),
                self._result("low_latency", "combine", "bf16", c, a.hidden * 2 * selections, 0, "nvshmem", a.ll_tokens, recv),
                self._result("low_latency", "dispatch+combine", a.dtype, p, int(per * selections) + a.hidden * 2 * selections,
                             0, "nvshmem", a.ll_tokens, recv)]
