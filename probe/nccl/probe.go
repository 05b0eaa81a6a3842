package nccl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"
	"unsafe"
)

// Version is the probe's own version, printed in its banner.
const Version = "1"

// Options are one rank's run.
type Options struct {
	Rank, Ranks int
	// Device is the GPU ordinal this rank drives (after CUDA_VISIBLE_DEVICES).
	Device int
	// PeerDevice is the GPU the copy collective reads from (CopyCollective);
	// -1 for none.
	PeerDevice int
	Collective string
	DataType   string
	// MinBytes, MaxBytes and StepFactor are nccl-tests -b, -e, -f.
	MinBytes, MaxBytes int64
	StepFactor         int64
	// Iters and Warmup are nccl-tests -n and -w; Check is -c.
	Iters, Warmup int
	Check         bool
	// Rendezvous passes the unique id when Ranks > 1.
	Rendezvous *Rendezvous
	// CUDA and NCCL override the libraries' lookup (tests, stand-ins).
	CUDA string
	NCCL *Library
	// Host names this rank in the device list.
	Host string
	// Log relays the NCCL_DEBUG_FILE this process was started with into
	// the output (LogRelay); nil when NCCL logs to stdout itself. The
	// caller closes it (Run's return, and the exits that skip it).
	Log *LogRelay
}

// Run measures one collective as one rank. The caller holds
// runtime.LockOSThread: CUDA's current context is per OS thread. Rank 0
// writes the table to out; every rank's errors come back.
func Run(ctx context.Context, o Options, out io.Writer) error {
	if err := o.validate(); err != nil {
		return err
	}
	if o.Collective == CopyCollective {
		return runCopy(o, out) // no NCCL: the copy engines alone
	}
	coll, _ := lookupCollective(o.Collective)
	typ, _ := lookupType(o.DataType)
	lib := o.NCCL
	if lib == nil {
		l := FindNCCL(ctx, getenv)
		lib = &l
	}
	cu, err := loadCUDA(o.CUDA)
	if err != nil {
		return err
	}
	nc, err := loadNCCL(lib.Path)
	if err != nil {
		return fmt.Errorf("%w (looked at: %s)", err, strings.Join(lib.Looked, ", "))
	}
	if err := cu.open(o.Device); err != nil {
		return err
	}
	defer cu.close()
	p := &prober{o: o, cu: cu, nc: nc, coll: coll, typ: typ, lib: lib, out: out, log: o.Log}
	if err := p.init(ctx); err != nil {
		return err
	}
	defer p.close()
	return p.run()
}

func (o *Options) validate() error {
	var errs []error
	if o.Ranks < 1 || o.Rank < 0 || o.Rank >= o.Ranks {
		errs = append(errs, fmt.Errorf("rank %d of %d: want 0 <= rank < ranks", o.Rank, o.Ranks))
	}
	if o.Ranks > 1 && o.Collective != CopyCollective && (o.Rendezvous == nil || o.Rendezvous.Endpoint == "" || o.Rendezvous.Key == "") {
		errs = append(errs, errors.New("several ranks need --etcd and --key for the unique id"))
	}
	if o.Collective == CopyCollective {
		errs = append(errs, o.validateCopy()...)
	} else if _, err := lookupCollective(o.Collective); err != nil {
		errs = append(errs, err)
	}
	if _, err := lookupType(o.DataType); err != nil {
		errs = append(errs, err)
	}
	if o.MinBytes <= 0 || o.MaxBytes < o.MinBytes || o.StepFactor < 2 {
		errs = append(errs, fmt.Errorf("sizes -b %d -e %d -f %d: want 0 < b <= e and f >= 2", o.MinBytes, o.MaxBytes, o.StepFactor))
	}
	if o.Iters < 1 || o.Warmup < 0 {
		errs = append(errs, fmt.Errorf("iterations -n %d -w %d: want n >= 1, w >= 0", o.Iters, o.Warmup))
	}
	return errors.Join(errs...)
}

// prober is one rank's state.
type prober struct {
	o    Options
	cu   *cuda
	nc   *ncclAPI
	coll *collective
	typ  dataType
	lib  *Library
	out  io.Writer
	log  *LogRelay

	stream     uintptr
	send, recv uint64
	scratch    uint64 // 2 doubles: the time and wrong-element sums
	sumBusBW   float64
	nBusBW     int
	wrong      int64 // wrong elements, every size
	wrongRuns  int   // runs (size, in or out of place) with any: nccl-tests' "Out of bounds values"
}

// init makes the communicator: rank 0's id through the rendezvous.
func (p *prober) init(ctx context.Context) error {
	var id uniqueID
	if p.o.Rank == 0 {
		if err := p.nc.check("ncclGetUniqueId", p.nc.ncclGetUniqueId(&id)); err != nil {
			return err
		}
		if p.o.Ranks > 1 {
			if err := p.o.Rendezvous.publish(ctx, id); err != nil {
				return err
			}
		}
	} else {
		var err error
		if id, err = p.o.Rendezvous.fetch(ctx); err != nil {
			return err
		}
	}
	err := p.nc.check("ncclCommInitRank", p.nc.ncclCommInitRank(&p.nc.comm, int32(p.o.Ranks), id, int32(p.o.Rank)))
	if p.o.Rendezvous != nil {
		p.o.Rendezvous.close() // every rank has joined (or init failed): the key goes
	}
	if err != nil {
		return err
	}
	if err := p.cu.check("cuStreamCreate", p.cu.cuStreamCreate(&p.stream, 0)); err != nil {
		return err
	}
	return p.allocate()
}

// allocate sizes both buffers for the largest size, as nccl-tests does
// (AllocateBuffs): each iteration then works at its own offset.
func (p *prober) allocate() error {
	s, r := p.bufferBytes()
	var err error
	if p.send, err = p.cu.alloc(uint64(s)); err != nil {
		return err
	}
	if p.recv, err = p.cu.alloc(uint64(r)); err != nil {
		return err
	}
	p.scratch, err = p.cu.alloc(16)
	return err
}

func (p *prober) close() {
	for _, b := range []uint64{p.send, p.recv, p.scratch} {
		if b != 0 {
			p.cu.cuMemFree(b)
		}
	}
	if p.stream != 0 {
		p.cu.cuStreamDestroy(p.stream)
	}
	if p.nc.comm != 0 {
		p.nc.ncclCommDestroy(p.nc.comm)
	}
}

// sizes is one size's element counts (setupArgs).
type sizes struct {
	param, sendBytes, recvBytes, sendInplace, recvInplace int64
}

func (p *prober) setup(size int64) sizes {
	elt := p.typ.size
	s, r, param, si, ri := p.coll.counts(int(size)/elt, elt, p.o.Ranks)
	e := int64(elt)
	return sizes{param: int64(param), sendBytes: int64(s) * e, recvBytes: int64(r) * e, sendInplace: int64(si) * e, recvInplace: int64(ri) * e}
}

// bufferBytes are the send and receive buffers' sizes: the largest size's,
// and never less than -e bytes, which the iterations' offsets walk through.
func (p *prober) bufferBytes() (send, recv int64) {
	z := p.setup(p.o.MaxBytes)
	return max(z.sendBytes, p.o.MaxBytes), max(z.recvBytes, p.o.MaxBytes)
}

func (p *prober) run() error {
	if err := p.header(); err != nil {
		return err
	}
	// Warm-up at every size of a ×2 sweep, as nccl-tests does.
	for _, size := range sweep(p.o.MinBytes, p.o.MaxBytes, 2) {
		z := p.setup(size)
		for i := range p.o.Warmup {
			if err := p.launch(z, false, i); err != nil {
				return err
			}
		}
		if err := p.sync(); err != nil {
			return err
		}
	}
	for _, size := range sweep(p.o.MinBytes, p.o.MaxBytes, p.o.StepFactor) {
		if err := p.row(size); err != nil {
			return err
		}
	}
	return p.footer()
}

// sweep is min, min×f, … up to max, stopping before a product would
// overflow (a huge -f ends the sweep, it does not wrap round to 0).
func sweep(minB, maxB, f int64) []int64 {
	var out []int64
	for size := minB; size <= maxB; size *= f {
		out = append(out, size)
		if size > maxB/f {
			break
		}
	}
	return out
}

// row measures one size out of place and in place and prints its line.
func (p *prober) row(size int64) error {
	z := p.setup(size)
	line := fmt.Sprintf("%12d  %12d  %8s  %6s  %6d", max(z.sendBytes, z.recvBytes), z.param, p.typ.name, p.coll.redop, p.coll.root)
	for _, inPlace := range []bool{false, true} {
		sec, wrong, checked, err := p.bench(z, inPlace)
		if err != nil {
			return err
		}
		alg := float64(z.param*int64(p.typ.size)*int64(p.coll.algMul(p.o.Ranks))) / 1e9 / sec
		bus := alg * p.coll.factor(p.o.Ranks)
		p.sumBusBW += bus
		p.nBusBW++
		line += fmt.Sprintf("  %7s  %6s  %6s", floatStr(sec*1e6, 7), floatStr(alg, 6), floatStr(bus, 6))
		if checked {
			p.wrong += wrong
			if wrong > 0 {
				p.wrongRuns++
			}
			line += fmt.Sprintf("  %6d", wrong)
		} else {
			line += "    N/A"
		}
	}
	return p.println(line)
}

// bench is BenchTime: data set up, one synchronising collective, then
// Iters back to back, timed on the host to the stream's end; the time
// (and wrong elements) summed over the ranks.
func (p *prober) bench(z sizes, inPlace bool) (sec float64, wrong int64, checked bool, err error) {
	checked = p.o.Check && !inPlace && p.typ.name == "float"
	if err := p.fill(z, checked); err != nil {
		return 0, 0, false, err
	}
	if err := p.launch(z, inPlace, 0); err != nil {
		return 0, 0, false, err
	}
	if err := p.sync(); err != nil {
		return 0, 0, false, err
	}
	t0 := time.Now()
	for i := range p.o.Iters {
		if err := p.launch(z, inPlace, i); err != nil {
			return 0, 0, false, err
		}
	}
	if err := p.cu.check("cuStreamSynchronize", p.cu.cuStreamSynchronize(p.stream)); err != nil {
		return 0, 0, false, err
	}
	local := time.Since(t0).Seconds() / float64(p.o.Iters)
	var localWrong int64
	if checked {
		if localWrong, err = p.validate(z); err != nil {
			return 0, 0, false, err
		}
	}
	sum, err := p.sumOverRanks(local, float64(localWrong))
	if err != nil {
		return 0, 0, false, err
	}
	return sum[0] / float64(p.o.Ranks), int64(sum[1]), checked, nil
}

// launch starts one collective at iteration iter's offset (startColl: the
// buffers are walked through so no two iterations reuse the same bytes).
func (p *prober) launch(z sizes, inPlace bool, iter int) error {
	total := max(z.sendBytes, z.recvBytes)
	steps := int64(1)
	if total > 0 {
		steps = max(1, p.o.MaxBytes/total)
	}
	shift := uint64(total * (int64(iter) % steps))
	send, recv := p.send+shift, p.recv+shift
	rank := int64(p.o.Rank)
	if inPlace {
		send = recv + uint64(z.sendInplace*rank)
		recv += uint64(z.recvInplace * rank)
	}
	return p.coll.launch(p.nc, send, recv, int(z.param), p.typ, p.o.Rank, p.o.Ranks, p.stream)
}

// fill writes rank+1 into the send buffer (as float bits, which the check
// reads back) and zeroes the receive buffer.
func (p *prober) fill(z sizes, checked bool) error {
	if !checked {
		return nil
	}
	s, r := p.bufferBytes()
	v := math.Float32bits(float32(p.o.Rank + 1))
	if err := p.cu.check("cuMemsetD32", p.cu.cuMemsetD32(p.send, v, uintptr(s/4))); err != nil {
		return err
	}
	return p.cu.check("cuMemsetD32", p.cu.cuMemsetD32(p.recv, 0, uintptr(r/4)))
}

// validate reads back elements of the receive buffer at offset 0 (the
// first iteration's): each peer's part at its start, middle and end.
func (p *prober) validate(z sizes) (int64, error) {
	n := z.recvBytes / 4
	if n == 0 {
		return 0, nil
	}
	part := z.param
	if part <= 0 || part > n {
		part = n
	}
	var wrong int64
	for start := int64(0); start < n; start += part {
		for _, i := range []int64{start, start + part/2, min(start+part, n) - 1} {
			var got float32
			if err := p.cu.check("cuMemcpyDtoH", p.cu.cuMemcpyDtoH(unsafe.Pointer(&got), p.recv+uint64(i*4), 4)); err != nil {
				return 0, err
			}
			if want := p.coll.expect(int(i), int(part), p.o.Rank, p.o.Ranks); got != want {
				wrong++
			}
		}
	}
	return wrong, nil
}

// sync is a barrier: a one-element all_reduce, to the stream's end.
func (p *prober) sync() error {
	_, err := p.sumOverRanks(0, 0)
	return err
}

// sumOverRanks sums two doubles over the ranks (nccl-tests' Allreduce of
// the time, and of the wrong elements).
func (p *prober) sumOverRanks(a, b float64) ([2]float64, error) {
	v := [2]float64{a, b}
	if err := p.cu.check("cuMemcpyHtoD", p.cu.cuMemcpyHtoD(p.scratch, unsafe.Pointer(&v[0]), 16)); err != nil {
		return v, err
	}
	if err := p.nc.check("ncclAllReduce", p.nc.ncclAllReduce(p.scratch, p.scratch, 2, 8 /* ncclFloat64 */, ncclSum, p.nc.comm, p.stream)); err != nil {
		return v, err
	}
	if err := p.cu.check("cuStreamSynchronize", p.cu.cuStreamSynchronize(p.stream)); err != nil {
		return v, err
	}
	err := p.cu.check("cuMemcpyDtoH", p.cu.cuMemcpyDtoH(unsafe.Pointer(&v[0]), p.scratch, 16))
	return v, err
}

func (p *prober) println(s string) error {
	p.log.CopyTo(p.out)
	if p.o.Rank != 0 {
		return nil
	}
	_, err := fmt.Fprintln(p.out, s)
	return err
}

// floatStr is nccl-tests' getFloatStr: the most decimals that fit width.
func floatStr(v float64, width int) string {
	for _, f := range []string{"%*.2f", "%*.1f", "%*.0f"} {
		if s := fmt.Sprintf(f, width, v); len(s) <= width {
			return s
		}
	}
	if width >= 7 {
		return fmt.Sprintf("%*.1e", width, v)
	}
	return fmt.Sprintf("%*.0e", width, v)
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}
