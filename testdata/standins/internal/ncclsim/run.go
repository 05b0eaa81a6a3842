// Package ncclsim is the body of the nccl-tests stand-ins (all_reduce_perf,
// alltoall_perf, sendrecv_perf): the same flags, output text and exit codes
// as nccl-tests 2.19.6 (shared/reference/tools.md §4), with ranks that are
// goroutines of one process moving real bytes through memory. The figures
// are what those copies measured; the device lines say "stand-in".
package ncclsim

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

var wordSize = map[string]int64{
	"int8": 1, "uint8": 1, "char": 1, "int32": 4, "uint32": 4, "int": 4, "int64": 8, "uint64": 8,
	"half": 2, "float16": 2, "bfloat16": 2, "float": 4, "float32": 4, "double": 8, "float64": 8, "f8e4m3": 1, "f8e5m2": 1,
}

// Main runs the collective named by the binary and returns the exit code.
func Main(collective string, argv []string, stdout, stderr io.Writer) int {
	prog := collective + "_perf"
	c := colls[collective]
	p, err := parse(prog, argv, stderr)
	if err != nil {
		e := err.(*exitErr)
		fmt.Fprintln(stdout, e.msg)
		return e.code
	}
	if _, ok := wordSize[p.dtype]; !ok {
		fmt.Fprintf(stdout, "invalid type %s, defaulting to float .. \n", p.dtype)
		p.dtype = "float"
	}
	t := &test{p: p, c: c, prog: prog, out: stdout, n: max(1, p.nThreads*p.nGpus)}
	if size, _ := strconv.Atoi(os.Getenv("OMPI_COMM_WORLD_SIZE")); size > 1 {
		w, err := joinWorld(c, size)
		if err != nil {
			fmt.Fprintf(stderr, "%s: NCCL bootstrap failed: %v\n", prog, err)
			return 3
		}
		defer w.close()
		fmt.Fprintf(stderr, "%s: rdmabench stand-in, MPI rank %d of %d (data moves over TCP between the ranks' processes)\n", prog, w.rank, w.size)
		t.n, t.eng = w.size, w
		if w.rank != 0 { // only rank 0 prints, as nccl-tests' PRINT
			t.out, t.p.jsonFile = io.Discard, ""
		}
		return t.run()
	}
	fmt.Fprintln(stderr, prog+": rdmabench stand-in (ranks are goroutines; data moves through host memory)")
	return t.run()
}

// engine runs the collective over the ranks: goroutines of this process
// (local), or this process as one MPI rank among others (world).
type engine interface {
	// op runs the collective once on every rank this process holds.
	op(count, w int64, inPlace bool)
	// validate runs it once on known data and returns the wrong words of
	// every rank (rank 0 of a world gets the sum).
	validate(count, w int64, inPlace bool) int64
	// barrier returns when every rank reached it.
	barrier()
	// avgSeconds is the mean of every rank's time per operation (-a 1).
	avgSeconds(sec float64) float64
	// devices are the "# Using devices" entries, every rank's.
	devices() []device
}

// device is one rank's entry in the device list.
type device struct {
	pid  int
	host string
	dev  int
}

type test struct {
	p     params
	c     *coll
	prog  string
	out   io.Writer
	n     int
	eng   engine
	rows  []jsonRow
	bus   []float64
	bad   int64
	start time.Time
}

func (t *test) printf(format string, a ...any) { fmt.Fprintf(t.out, format, a...) }

func (t *test) run() int {
	t.start = time.Now()
	jf := t.openJSON()
	if t.eng == nil {
		t.eng = &local{t: t, rs: t.alloc()}
	} else if w, ok := t.eng.(*world); ok {
		w.alloc(t.p.maxBytes, wordSize[t.p.dtype])
	}
	t.header()
	for size := t.p.minBytes; size <= t.p.maxBytes; size = t.next(size) {
		t.size(size)
		if t.p.maxBytes == 0 || size == t.next(size) {
			break
		}
	}
	return t.footer(jf)
}

func (t *test) next(size int64) int64 {
	if t.p.stepFactor > 1 {
		return max(size*t.p.stepFactor, size+1)
	}
	return size + t.p.stepBytes
}

func (t *test) header() {
	step := fmt.Sprintf("%d(bytes)", t.p.stepBytes)
	if t.p.stepFactor > 1 {
		step = fmt.Sprintf("%d(factor)", t.p.stepFactor)
	}
	t.printf("# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n")
	t.printf("# Collective test starting: %s\n", t.prog)
	t.printf("# nThread %d nGpus %d minBytes %d maxBytes %d step: %s warmup iters: %d iters: %d agg iters: %d validation: %d graph: 0 unalign: 0\n",
		t.p.nThreads, t.p.nGpus, t.p.minBytes, t.p.maxBytes, step, t.p.warmup, t.p.iters, t.p.agg, t.p.check)
	t.printf("#\n# Using devices\n")
	for r, d := range t.eng.devices() {
		t.printf("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s\n", r, 0, d.pid, d.host, d.dev, 0, 0, 0, "rdmabench stand-in (host memory)")
	}
	t.printf("#\n%s", headerLines())
}

// alloc sizes every rank's buffers for the largest size.
func (t *test) alloc() []*rank {
	count, _ := t.c.counts(t.p.maxBytes, t.n, wordSize[t.p.dtype])
	wds := words(count*int64(t.n), wordSize[t.p.dtype]) + 4
	rs := make([]*rank, t.n)
	for i := range rs {
		rs[i] = &rank{send: make([]float32, wds), recv: make([]float32, wds), scratch: make([]float32, wds)}
	}
	return rs
}

// size runs and prints one row: out-of-place, then in-place.
func (t *test) size(size int64) {
	w := wordSize[t.p.dtype]
	count, shown := t.c.counts(size, t.n, w)
	oop := t.measure(count, w, false)
	ip := t.measure(count, w, true)
	redop, check := "none", t.p.check > 0
	if t.c.reduces {
		redop = t.p.op
	}
	t.printf("%s", rowLine(shown, count, t.p.dtype, redop, -1, oop, ip, check, check && t.c.checkIP))
	t.bus = append(t.bus, oop.busbw, ip.busbw)
	t.rows = append(t.rows, jsonRow{size: shown, count: count, dtype: t.p.dtype, redop: redop, oop: oop, ip: ip, check: check, checkIP: check && t.c.checkIP, iters: t.p.iters})
}

// measure: check iterations (counting wrong words), warm-up, then timed.
func (t *test) measure(count, w int64, inPlace bool) placeResult {
	var res placeResult
	if t.p.check > 0 {
		res.wrong = t.eng.validate(count, w, inPlace)
		if !inPlace || t.c.checkIP {
			t.bad += res.wrong
		}
	}
	for i := 0; i < t.p.warmup; i++ {
		t.eng.op(count, w, inPlace)
	}
	ops := max(1, t.p.iters) * max(1, t.p.agg)
	t.eng.barrier()
	start := time.Now()
	for i := 0; i < ops; i++ {
		t.eng.op(count, w, inPlace)
	}
	sec := t.eng.avgSeconds(time.Since(start).Seconds() / float64(ops))
	res.timeUS = sec * 1e6
	algBytes := float64(count * w)
	if t.c.name == "alltoall" {
		algBytes = float64(count * w * int64(t.n))
	}
	if sec > 0 {
		res.algbw = algBytes / 1e9 / sec
	}
	res.busbw = res.algbw * t.c.busFactor(t.n)
	return res
}

// local is the one-process engine: ranks are goroutines.
type local struct {
	t  *test
	rs []*rank
}

func (l *local) op(count, w int64, inPlace bool) { l.t.c.op(l.rs, count, w, inPlace) }
func (l *local) barrier()                        {}
func (l *local) avgSeconds(sec float64) float64  { return sec }

func (l *local) devices() []device {
	host, _ := os.Hostname()
	ds := make([]device, l.t.n)
	for r := range ds {
		ds[r] = device{pid: os.Getpid(), host: host, dev: r}
	}
	return ds
}

func (l *local) validate(count, w int64, inPlace bool) int64 {
	return l.t.validate(l.rs, count, w, inPlace)
}

// validate fills the send buffers, runs once, and counts wrong words.
func (t *test) validate(rs []*rank, count, w int64, inPlace bool) int64 {
	total := words(count*int64(t.n), w)
	chunk := words(count, w)
	if t.c.name != "alltoall" {
		total = words(count, w)
	}
	for r, x := range rs {
		for i := 0; i < total; i++ {
			x.send[i] = t.c.init(r, i, chunk, t.n)
			x.recv[i] = -1
		}
	}
	t.c.op(rs, count, w, inPlace)
	var wrong int64
	for r, x := range rs {
		got := x.recv
		if inPlace {
			got = x.send
		}
		for i := 0; i < total; i++ {
			if got[i] != t.c.expect(r, i, chunk, t.n) {
				wrong++
			}
		}
	}
	return wrong
}

func (t *test) footer(jf *os.File) int {
	var avg float64
	for _, b := range t.bus {
		avg += b
	}
	if len(t.bus) > 0 {
		avg /= float64(len(t.bus))
	}
	verdict, okay, code := "", "unchecked", 0
	if v := os.Getenv("NCCL_TESTS_MIN_BW"); v != "" {
		min, _ := strconv.ParseFloat(v, 64)
		verdict, okay = "OK", "true"
		if avg < 0.9*min {
			verdict, okay, code = "FAILED", "false", 7
		}
	}
	oob := "OK"
	if t.bad > 0 {
		oob, code = "FAILED", 7
	}
	t.printf("# %-20s : %d %s\n", "Out of bounds values", t.bad, oob)
	t.printf("# %-20s : %s %s\n", "Avg bus bandwidth", cG(avg), verdict)
	t.printf("#\n# Collective test concluded: %s\n#\n\n", t.prog)
	t.writeJSON(jf, avg, okay)
	return code
}

// openJSON creates the -J file exclusively, appending .0, .1 … if taken.
func (t *test) openJSON() *os.File {
	if t.p.jsonFile == "" {
		return nil
	}
	path := t.p.jsonFile
	for i := 0; ; i++ {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			t.printf("# Writing JSON output to %s\n", path)
			return f
		}
		if !os.IsExist(err) || i > 100 {
			t.printf("# skipping json output; %s not accessible\n", filepath.Clean(t.p.jsonFile))
			return nil
		}
		path = fmt.Sprintf("%s.%d", t.p.jsonFile, i)
	}
}
