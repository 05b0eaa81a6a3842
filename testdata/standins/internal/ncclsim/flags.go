package ncclsim

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// params are nccl-tests' options (src/common.cu), defaults included.
type params struct {
	nThreads, nGpus           int
	minBytes, maxBytes        int64
	stepBytes                 int64
	stepFactor                int64
	iters, warmup, agg, check int
	op, dtype                 string
	root, average             int
	jsonFile                  string
	args                      []string
}

func defaults() params {
	return params{nThreads: 1, nGpus: 1, minBytes: 32 << 20, maxBytes: 32 << 20, stepBytes: 1 << 20,
		iters: 20, warmup: 1, agg: 1, check: 1, op: "sum", dtype: "float", average: 1}
}

// longNames maps getopt_long names to their short letters.
var longNames = map[string]byte{
	"nthreads": 't', "ngpus": 'g', "minbytes": 'b', "maxbytes": 'e', "stepbytes": 'i', "stepfactor": 'f',
	"iters": 'n', "warmup_iters": 'w', "agg_iters": 'm', "run_cycles": 'N', "check": 'c', "op": 'o',
	"datatype": 'd', "root": 'r', "average": 'a', "blocking": 'z', "cudagraph": 'G', "report_cputime": 'C',
	"local_register": 'R', "report_timestamps": 'S', "output_file": 'J', "timeout": 'T', "parallel_init": 'p',
	"stream_null": 'y', "cta_policy": 'x', "device_implementation": 'D', "device_cta_count": 'V',
	"memory": 'M', "unalign": 'u', "per_iter_timing": 'I', "per_iter_skip": 'K', "help": 'h',
}

const shortOpts = "tgbeifnwmNcodrazGCRSJTpyxDVMuIKh"

// exitErr ends the program with a code after printing msg (to stdout).
type exitErr struct {
	msg  string
	code int
}

// Error is the message printed before exiting.
func (e *exitErr) Error() string { return e.msg }

// parse walks argv like getopt_long: every option takes an argument
// except -h; values attached or separate; unknown ⇒ usage, exit 0.
func parse(prog string, argv []string, stderr io.Writer) (params, error) {
	p := defaults()
	p.args = append([]string{prog}, argv...)
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		var c byte
		var val string
		hasVal := false
		switch {
		case strings.HasPrefix(a, "--"):
			name, v, ok := strings.Cut(a[2:], "=")
			lc, known := longNames[name]
			if !known {
				fmt.Fprintf(stderr, "%s: unrecognized option '%s'\n", prog, a)
				return p, &exitErr{"invalid option '?'\n" + usage(prog), 0}
			}
			c, val, hasVal = lc, v, ok
		case strings.HasPrefix(a, "-") && len(a) > 1:
			c = a[1]
			if !strings.ContainsRune(shortOpts, rune(c)) {
				fmt.Fprintf(stderr, "%s: invalid option -- '%c'\n", prog, c)
				return p, &exitErr{"invalid option '?'\n" + usage(prog), 0}
			}
			if len(a) > 2 {
				val, hasVal = a[2:], true
			}
		default:
			continue
		}
		if c == 'h' {
			return p, &exitErr{usage(prog), 0}
		}
		if !hasVal {
			if i+1 >= len(argv) {
				fmt.Fprintf(stderr, "%s: option requires an argument -- '%c'\n", prog, c)
				return p, &exitErr{"invalid option '?'\n" + usage(prog), 0}
			}
			i++
			val = argv[i]
		}
		if err := p.set(c, val); err != nil {
			return p, err
		}
	}
	if p.minBytes > p.maxBytes {
		return p, &exitErr{fmt.Sprintf("invalid sizes for 'minbytes' and 'maxbytes': %d > %d", p.minBytes, p.maxBytes), 255}
	}
	return p, nil
}

func (p *params) set(c byte, v string) error {
	n, _ := strconv.Atoi(v)
	switch c {
	case 't':
		p.nThreads = n
	case 'g':
		p.nGpus = n
	case 'b', 'e', 'i':
		size, err := parseSize(v)
		name := map[byte]string{'b': "minbytes", 'e': "maxbytes", 'i': "stepbytes"}[c]
		if err != nil {
			return &exitErr{fmt.Sprintf("invalid size specified for '%s'", name), 255}
		}
		*map[byte]*int64{'b': &p.minBytes, 'e': &p.maxBytes, 'i': &p.stepBytes}[c] = size
	case 'f':
		p.stepFactor = int64(n)
	case 'n':
		p.iters = n
	case 'w':
		p.warmup = n
	case 'm':
		p.agg = n
	case 'c':
		p.check = n
	case 'o':
		p.op = v
	case 'd':
		p.dtype = v
	case 'r':
		p.root = n
	case 'a':
		p.average = n
	case 'J':
		if strings.HasSuffix(strings.ToLower(v), ".json") {
			p.jsonFile = v
		}
	}
	return nil
}

// parseSize reads 32M, 8G, 1k (×1024 powers, case-insensitive).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size")
	}
	return v * mult, nil
}

func usage(prog string) string {
	return "USAGE: " + prog + " \n\t[-t,--nthreads <num threads>] \n\t[-g,--ngpus <gpus per thread>] \n\t" +
		"[-b,--minbytes <min size in bytes>] \n\t[-e,--maxbytes <max size in bytes>] \n\t[-i,--stepbytes <increment size>] \n\t" +
		"[-f,--stepfactor <increment factor>] \n\t[-n,--iters <iteration count>] \n\t[-m,--agg_iters <aggregated iteration count>] \n\t" +
		"[-w,--warmup_iters <warmup iteration count>] \n\t[-c,--check <check iteration count>] \n\t[-o,--op <sum/prod/min/max/avg/mulsum/all>] \n\t" +
		"[-d,--datatype <nccltype/all>] \n\t[-r,--root <root>] \n\t[-J,--output_file <file>] \n\t[-h,--help]\n"
}
