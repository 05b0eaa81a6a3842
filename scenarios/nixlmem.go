package scenarios

import (
	"fmt"
	"strconv"
	"strings"
)

// nixlbench allocates --total_buffer_size in every process up front, and
// fills it (DRAM: the pod's memory; VRAM: the GPU's). Left to its default it
// takes 8 GiB (nixl benchmark/nixlbench/src/utils/utils.cpp), more than a
// pool's default 4Gi: the kernel kills the pod. rdmabench always passes the
// size the test needs, and validation checks it against the pod's memory.
const (
	// NixlDefaultBuffer is nixlbench's own --total_buffer_size.
	NixlDefaultBuffer = 8 << 30
	// NixlDefaultMaxBlock is its --max_block_size, and rdmabench's.
	NixlDefaultMaxBlock = 64 << 20
	// NixlMemoryHeadroom is what a nixlbench process needs beside its
	// buffer (the binary, NIXL's and UCX's pools, etcd's client).
	NixlMemoryHeadroom = 512 << 20
)

// NixlBufferBytes is the --total_buffer_size for blocks of up to block
// bytes in batches of up to batch: one batch per thread and per device
// (nixlbench requires max_block×max_batch ≤ total/num_threads and ≤
// total/num_*_dev), rounded up to a MiB (divisible by the thread and
// device counts).
func NixlBufferBytes(block int64, batch int, extra []string) int64 {
	const mib = 1 << 20
	n := block * int64(max(batch, 1)) * int64(nixlExtraInt(extra, "num_threads", 1)) *
		int64(max(nixlExtraInt(extra, "num_initiator_dev", 1), nixlExtraInt(extra, "num_target_dev", 1)))
	return (n + mib - 1) / mib * mib
}

// NixlExtraBuffer is the --total_buffer_size written in extra, and its
// index there; -1 when none.
func NixlExtraBuffer(extra []string) (int64, int) {
	for i, w := range extra {
		if v, ok := strings.CutPrefix(strings.TrimLeft(w, "-"), "total_buffer_size="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n, i
		}
	}
	return 0, -1
}

func nixlExtraInt(extra []string, flag string, def int) int {
	for _, w := range extra {
		if v, ok := strings.CutPrefix(strings.TrimLeft(w, "-"), flag+"="); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n
			}
		}
	}
	return def
}

// nixlBuffer is the buffer a nixlbench test allocates per process and the
// path of what decides it: args.extra's --total_buffer_size, else its
// largest request (perRequest) or its largest block × maxBatch.
func (v *validator) nixlBuffer(ap string, t *Test) (int64, string) {
	a := &t.Args
	if n, i := NixlExtraBuffer(a.Extra); i >= 0 {
		return n, fmt.Sprintf("%s.extra[%d]", ap, i)
	}
	if a.PerRequest {
		if v.s.Serving == nil {
			return 0, ""
		}
		s := v.s.Serving.Resolved()
		layout := s.Layout(KVDtypeBytes(s.KVDtype))
		var most int64
		for _, n := range s.ContextLengths {
			most = max(most, NixlBufferBytes(layout.BlockBytes, layout.Descriptors(n), a.Extra))
		}
		return most, ap + ".perRequest"
	}
	block, at := int64(NixlDefaultMaxBlock), ap
	if a.MaxSize.Parse() == nil && a.MaxSize.Bytes > 0 {
		block, at = a.MaxSize.Bytes, ap+".maxSize"
	}
	if a.MaxBatch > 1 {
		at = ap + ".maxBatch"
	}
	return NixlBufferBytes(block, a.MaxBatch, a.Extra), at
}

// nixlMemory refuses a nixlbench test whose buffer does not fit in the
// memory limit of a pod whose side keeps it in DRAM (kube: requests =
// limits; the kernel kills the pod that fills more).
func (v *validator) nixlMemory(path string, t *Test) {
	if t.Tool != "nixlbench" || v.s.Backend != BackendKube || v.s.Cluster == nil {
		return
	}
	ap := path + ".args"
	need, at := v.nixlBuffer(ap, t)
	if need <= 0 {
		return
	}
	sides := []struct{ pool, seg, role string }{{t.From, t.Args.InitiatorSeg, "initiator"}, {t.To, t.Args.TargetSeg, "target"}}
	for _, s := range sides {
		p := v.pool(s.pool)
		if p == nil || strings.EqualFold(s.seg, "VRAM") {
			continue
		}
		mem := firstNonEmpty(p.Memory, v.s.Cluster.Memory)
		limit, ok := QuantityValue(mem)
		if !ok || float64(need+NixlMemoryHeadroom) <= limit {
			continue
		}
		want := (need + NixlMemoryHeadroom + 1<<30 - 1) >> 30
		shrink := "lower maxSize or maxBatch (the buffer is the largest block × batch)"
		if strings.Contains(at, ".extra[") {
			shrink = "lower --total_buffer_size to the largest block × batch"
		}
		v.errf(at, fmt.Sprintf("give pool %s memory: %dGi (pools[].memory or cluster.memory), or %s", s.pool, want, shrink),
			"nixlbench's %s allocates a buffer of %s (--total_buffer_size) in DRAM and needs %s beside it; pool %s's pods are limited to %s",
			s.role, humanBytes(need), humanBytes(NixlMemoryHeadroom), s.pool, mem)
		return
	}
}

// humanBytes writes a byte count in the largest binary unit that divides
// it ("64MiB", "8GiB"), else in bytes.
func humanBytes(n int64) string {
	for _, u := range []struct {
		s string
		n int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + u.s
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
