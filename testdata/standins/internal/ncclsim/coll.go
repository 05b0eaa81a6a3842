package ncclsim

import (
	"sync"
)

// The collectives, done by the stand-in's ranks (goroutines of one
// process) with real memory copies and additions; the time they take is
// what the rows report.

// coll describes one nccl-tests binary.
type coll struct {
	name    string // "all_reduce"
	reduces bool   // redop column is the op, else "none"
	// counts: per-rank parameter count and the bytes the size column shows.
	counts func(size int64, n int, w int64) (count, shown int64)
	// busFactor turns algbw into busbw (§4.4 of tools.md).
	busFactor func(n int) float64
	op        func(rs []*rank, count int64, w int64, inPlace bool)
	// init and expect give rank r's send word i and the recv word wanted.
	init    func(r, i, chunk int, n int) float32
	expect  func(r, i, chunk int, n int) float32
	checkIP bool // in-place #wrong is checked (else N/A)
}

// rank is one simulated GPU's buffers, in float32 words.
type rank struct {
	send, recv, scratch []float32
}

func words(count, w int64) int { return int((count*w + 3) / 4) }

var colls = map[string]*coll{
	"all_reduce": {
		name: "all_reduce", reduces: true, checkIP: true,
		counts:    func(size int64, n int, w int64) (int64, int64) { c := size / w; return c, c * w },
		busFactor: func(n int) float64 { return 2 * float64(n-1) / float64(n) },
		op:        allReduce,
		init:      func(r, i, chunk, n int) float32 { return float32(r + 1) },
		expect:    func(r, i, chunk, n int) float32 { return float32(n * (n + 1) / 2) },
	},
	"alltoall": {
		name: "alltoall",
		counts: func(size int64, n int, w int64) (int64, int64) {
			c := size / w / int64(n)
			align := max(1, 16/w)
			c -= c % align
			return c, c * int64(n) * w
		},
		busFactor: func(n int) float64 { return float64(n-1) / float64(n) },
		op:        allToAll,
		init:      func(r, i, chunk, n int) float32 { return float32(r*n + i/max(chunk, 1) + 1) },
		expect:    func(r, i, chunk, n int) float32 { return float32((i/max(chunk, 1))*n + r + 1) },
	},
	"sendrecv": {
		name:      "sendrecv",
		counts:    func(size int64, n int, w int64) (int64, int64) { c := size / w; return c, c * w },
		busFactor: func(n int) float64 { return 1 },
		op:        sendRecv,
		init:      func(r, i, chunk, n int) float32 { return float32(r + 1) },
		expect:    func(r, i, chunk, n int) float32 { return float32((r-1+n)%n + 1) },
	},
}

// parallel runs f for every rank at once and waits.
func parallel(n int, f func(r int)) {
	var wg sync.WaitGroup
	wg.Add(n)
	for r := 0; r < n; r++ {
		go func(r int) { defer wg.Done(); f(r) }(r)
	}
	wg.Wait()
}

// allReduce: rank r sums its chunk over every rank's send buffer and writes
// the sum into every rank's recv buffer (reduce-scatter + all-gather).
func allReduce(rs []*rank, count, w int64, inPlace bool) {
	n, total := len(rs), words(count, w)
	parallel(n, func(r int) {
		lo, hi := r*total/n, (r+1)*total/n
		for i := lo; i < hi; i++ {
			var s float32
			for _, x := range rs {
				s += x.send[i]
			}
			for _, x := range rs {
				if inPlace {
					x.send[i] = s
				} else {
					x.recv[i] = s
				}
			}
		}
	})
}

// allToAll: rank r's chunk j goes to rank j's slot r.
func allToAll(rs []*rank, count, w int64, inPlace bool) {
	n, chunk := len(rs), words(count, w)
	if inPlace {
		parallel(n, func(r int) { copy(rs[r].scratch, rs[r].send[:chunk*n]) })
	}
	parallel(n, func(r int) {
		src := rs[r].send
		if inPlace {
			src = rs[r].scratch
		}
		for j := 0; j < n; j++ {
			dst := rs[j].recv
			if inPlace {
				dst = rs[j].send
			}
			copy(dst[r*chunk:(r+1)*chunk], src[j*chunk:(j+1)*chunk])
		}
	})
}

// sendRecv: rank r sends its buffer to rank r+1.
func sendRecv(rs []*rank, count, w int64, inPlace bool) {
	n, total := len(rs), words(count, w)
	if inPlace {
		parallel(n, func(r int) { copy(rs[r].scratch, rs[r].send[:total]) })
	}
	parallel(n, func(r int) {
		src := rs[r].send
		if inPlace {
			src = rs[r].scratch
		}
		dst := rs[(r+1)%n].recv
		if inPlace {
			dst = rs[(r+1)%n].send
		}
		copy(dst[:total], src[:total])
	})
}
