package nccl

import "fmt"

// collective is one operation as nccl-tests defines it: how a size maps
// to element counts (GetCollByteCount), its bandwidths (GetBw), what it
// prints in the redop and root columns, how it is launched, and the value
// a validated element holds when every rank's send buffer is rank+1.
type collective struct {
	name  string
	redop string
	root  int
	// counts: from the size's total element count, the elements sent and
	// received per rank, the count passed to NCCL (param), and the in-place
	// offsets (elements, multiplied by the rank).
	counts func(count, elt, nranks int) (send, recv, param, sendInplace, recvInplace int)
	// factor is busbw / algbw; algMul multiplies param × elt into the bytes
	// algbw divides by time.
	factor func(nranks int) float64
	algMul func(nranks int) int
	launch func(n *ncclAPI, send, recv uint64, param int, t dataType, rank, nranks int, stream uintptr) error
	// expect is element i of a rank's receive buffer, out of place.
	expect func(i, param, rank, nranks int) float32
}

// share is one rank's part of count elements, as nccl-tests cuts it for
// all_gather, reduce_scatter and alltoall: count/nranks, rounded down to
// 16 bytes.
func share(count, elt, nranks int) int { return (count / nranks) &^ (16/elt - 1) }

func ring(n int) float64       { return float64(2*(n-1)) / float64(n) }
func oneLess(n int) float64    { return float64(n-1) / float64(n) }
func one(int) float64          { return 1 }
func timesOne(int) int         { return 1 }
func timesRanks(n int) int     { return n }
func sumOfRanks(n int) float32 { return float32(n*(n+1)) / 2 }

var collectives = []collective{
	{name: "all_reduce", redop: "sum", root: -1,
		counts: func(c, _, _ int) (int, int, int, int, int) { return c, c, c, 0, 0 },
		factor: ring, algMul: timesOne,
		launch: func(n *ncclAPI, s, r uint64, p int, t dataType, _, _ int, st uintptr) error {
			return n.check("ncclAllReduce", n.ncclAllReduce(s, r, uintptr(p), t.code, ncclSum, n.comm, st))
		},
		expect: func(_, _, _, n int) float32 { return sumOfRanks(n) }},
	{name: "all_gather", redop: "none", root: -1,
		counts: func(c, elt, n int) (int, int, int, int, int) { b := share(c, elt, n); return b, b * n, b, b, 0 },
		factor: oneLess, algMul: timesRanks,
		launch: func(n *ncclAPI, s, r uint64, p int, t dataType, _, _ int, st uintptr) error {
			return n.check("ncclAllGather", n.ncclAllGather(s, r, uintptr(p), t.code, n.comm, st))
		},
		expect: func(i, p, _, _ int) float32 { return float32(i/p + 1) }},
	{name: "reduce_scatter", redop: "sum", root: -1,
		counts: func(c, elt, n int) (int, int, int, int, int) { b := share(c, elt, n); return b * n, b, b, 0, b },
		factor: oneLess, algMul: timesRanks,
		launch: func(n *ncclAPI, s, r uint64, p int, t dataType, _, _ int, st uintptr) error {
			return n.check("ncclReduceScatter", n.ncclReduceScatter(s, r, uintptr(p), t.code, ncclSum, n.comm, st))
		},
		expect: func(_, _, _, n int) float32 { return sumOfRanks(n) }},
	{name: "alltoall", redop: "none", root: -1,
		counts: func(c, elt, n int) (int, int, int, int, int) { p := share(c, elt, n); return n * p, n * p, p, 0, 0 },
		factor: oneLess, algMul: timesRanks, launch: alltoall,
		expect: func(i, p, _, _ int) float32 { return float32(i/p + 1) }},
	{name: "sendrecv", redop: "sum", root: -1,
		counts: func(c, _, _ int) (int, int, int, int, int) { return c, c, c, 0, 0 },
		factor: one, algMul: timesOne, launch: sendrecv,
		expect: func(_, _, rank, n int) float32 { return float32((rank-1+n)%n + 1) }},
	{name: "broadcast", redop: "none", root: 0,
		counts: func(c, _, _ int) (int, int, int, int, int) { return c, c, c, 0, 0 },
		factor: one, algMul: timesOne,
		launch: func(n *ncclAPI, s, r uint64, p int, t dataType, _, _ int, st uintptr) error {
			return n.check("ncclBroadcast", n.ncclBroadcast(s, r, uintptr(p), t.code, 0, n.comm, st))
		},
		expect: func(int, int, int, int) float32 { return 1 }},
}

// alltoall is nccl-tests' AlltoAll: NCCL's ncclAlltoAll where the library
// has it (2.28 on, as nccl-tests 2.19 calls it), else one send and one
// receive of param elements to and from every rank, itself included, in
// one group.
func alltoall(n *ncclAPI, s, r uint64, p int, t dataType, _, nranks int, st uintptr) error {
	if n.ncclAlltoAll != nil {
		return n.check("ncclAlltoAll", n.ncclAlltoAll(s, r, uintptr(p), t.code, n.comm, st))
	}
	if err := n.check("ncclGroupStart", n.ncclGroupStart()); err != nil {
		return err
	}
	chunk := uint64(p * t.size)
	for peer := range nranks {
		if err := n.check("ncclSend", n.ncclSend(s+uint64(peer)*chunk, uintptr(p), t.code, int32(peer), n.comm, st)); err != nil {
			return err
		}
		if err := n.check("ncclRecv", n.ncclRecv(r+uint64(peer)*chunk, uintptr(p), t.code, int32(peer), n.comm, st)); err != nil {
			return err
		}
	}
	return n.check("ncclGroupEnd", n.ncclGroupEnd())
}

// sendrecv is nccl-tests' SendRecv: send to the next rank, receive from
// the previous one, in one group.
func sendrecv(n *ncclAPI, s, r uint64, p int, t dataType, rank, nranks int, st uintptr) error {
	if err := n.check("ncclGroupStart", n.ncclGroupStart()); err != nil {
		return err
	}
	if err := n.check("ncclSend", n.ncclSend(s, uintptr(p), t.code, int32((rank+1)%nranks), n.comm, st)); err != nil {
		return err
	}
	if err := n.check("ncclRecv", n.ncclRecv(r, uintptr(p), t.code, int32((rank-1+nranks)%nranks), n.comm, st)); err != nil {
		return err
	}
	return n.check("ncclGroupEnd", n.ncclGroupEnd())
}

// Collectives lists the operations the probe runs, as nccl-tests names
// them (all_reduce …).
func Collectives() []string {
	out := make([]string, len(collectives))
	for i, c := range collectives {
		out[i] = c.name
	}
	return out
}

func lookupCollective(name string) (*collective, error) {
	for i := range collectives {
		if collectives[i].name == name {
			return &collectives[i], nil
		}
	}
	return nil, fmt.Errorf("unknown collective %q (known: %v, and %s with --peer-device)", name, Collectives(), CopyCollective)
}
