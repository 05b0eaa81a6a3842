package parsers

import (
	"strconv"
	"strings"
)

// otherLine handles lines that are neither comments nor rows: failure
// messages, launcher noise, NCCL WARN lines, RCCL's version lines and the
// command line that started the test.
func (p *ncclParser) otherLine(raw, line string) {
	p.launcherLine(line)
	if cls, specific, ok := ncclFailure(line, p.lastWarn); ok {
		p.run().failWith(cls, strings.TrimSpace(line), specific)
		return
	}
	switch {
	case strings.Contains(line, "NCCL WARN "):
		msg := strings.TrimSpace(line[strings.Index(line, "NCCL WARN ")+len("NCCL WARN "):])
		p.lastWarn = msg
		p.transport.observe(raw)
		if p.cur != nil {
			p.cur.warn("NCCL WARN " + msg)
		}
	case strings.Contains(line, "UCX  WARN") || strings.Contains(line, "UCX  ERROR"):
		p.transport.observe(raw)
		if p.cur != nil {
			p.cur.warn(ncclAfter(line, "UCX  "))
		}
	case strings.HasPrefix(line, "RCCL version"), strings.HasPrefix(line, "HIP version"), strings.HasPrefix(line, "ROCm version"):
		k, v, _ := strings.Cut(line, ":")
		ncclSetInfo(&p.run().m, strings.ToLower(strings.ReplaceAll(strings.TrimSpace(k), " ", "_")), strings.TrimSpace(v))
	case strings.HasPrefix(line, "..."):
		if p.cur != nil {
			p.cur.warn("capture has elided lines ('...'): rows may be missing")
		}
	case strings.Contains(line, "_perf"):
		p.commandLine(line)
	default:
		p.transport.observe(raw)
	}
}

// commandLine takes the test name from a command line ("./build/all_reduce_perf -b 8 …").
func (p *ncclParser) commandLine(line string) {
	for _, w := range strings.Fields(line) {
		if i := strings.LastIndexByte(w, '/'); i >= 0 {
			w = w[i+1:]
		}
		if strings.HasSuffix(w, "_perf") || strings.HasSuffix(w, "_perf_mpi") {
			name := strings.TrimSuffix(w, "_mpi")
			if p.cur != nil && p.cur.m.Test == "" {
				p.cur.m.Test = name
			} else if p.cur == nil {
				p.command = name
			}
			return
		}
	}
}

func ncclAfter(line, marker string) string {
	if i := strings.Index(line, marker); i >= 0 {
		return strings.TrimSpace(line[i:])
	}
	return line
}

// ncclFailure recognises the failure lines of nccl-tests and its launchers.
// specific is false for generic lines (back-traces, mpirun's summary) that
// must not hide the class of a more precise message.
func ncclFailure(line, lastWarn string) (ErrorClass, bool, bool) {
	switch {
	case strings.Contains(line, "Test NCCL failure"):
		return ncclFailureClass(line, lastWarn), true, true
	case strings.Contains(line, "Test CUDA failure"):
		if strings.Contains(line, "no CUDA-capable device") || strings.Contains(line, "invalid device ordinal") {
			return ClassNoDevice, true, true
		}
		return ClassToolError, true, true
	case strings.Contains(line, "Invalid number of GPUs"):
		return ClassNoDevice, true, true
	case strings.Contains(line, "Test timeout"):
		return ClassTimeout, true, true
	case strings.HasPrefix(line, "rank=") && strings.Contains(line, "#wrong="):
		return ClassDataError, true, true
	case strings.Contains(line, ": Test failure "),
		strings.Contains(line, "mpirun detected that one or more processes exited"),
		strings.Contains(line, "mpirun noticed that process"),
		strings.Contains(line, "MPI_ABORT was invoked"),
		strings.Contains(line, "Primary job  terminated normally, but"):
		return ClassToolError, false, true
	}
	return ClassNone, false, false
}

// ncclFailureClass reads the NCCL error string (and the last NCCL WARN line
// before it) to tell a network problem from a usage error or a crash.
func ncclFailureClass(line, lastWarn string) ErrorClass {
	text := line + " " + lastWarn
	switch {
	case strings.Contains(text, "no socket interface found"), strings.Contains(text, "No device found"):
		return ClassNoDevice
	case strings.Contains(text, "remote process exited"), strings.Contains(text, "network error"),
		strings.Contains(text, "Connection refused"), strings.Contains(text, "Connection reset"),
		strings.Contains(text, "Connection closed"), strings.Contains(text, "connect to"):
		return ClassConnectionFailed
	case strings.Contains(text, "timeout"), strings.Contains(text, "timed out"):
		return ClassTimeout
	case strings.Contains(text, "invalid usage"), strings.Contains(text, "invalid argument"):
		return ClassUsageError
	}
	return ClassToolError
}

// close turns what was collected into the final verdict of the run.
func (r *ncclRun) close() {
	if r.maxRank >= 0 {
		r.m.Ranks = r.maxRank + 1
	}
	if len(r.hosts) > 0 {
		ncclSetInfo(&r.m, "hosts", strings.Join(r.hosts, ","))
	}
	if len(r.gpus) > 0 {
		ncclSetInfo(&r.m, "gpus", strings.Join(r.gpus, ","))
	}
	if r.m.Samples == nil {
		r.m.Samples = []Sample{}
	}
	switch {
	case r.fail:
	case r.wrongRows > 0:
		r.failWith(ClassDataError, "nccl-tests: #wrong > 0 in "+strconv.Itoa(r.wrongRows)+" row(s): data corruption", true)
	case r.starRows > 0:
		r.failWith(ClassDataError, "rccl-tests: error above threshold ('*') in "+strconv.Itoa(r.starRows)+" row(s): data corruption", true)
	case r.legacyErrors() > 0:
		r.failWith(ClassDataError, "nccl-tests: legacy error column above tolerance in "+strconv.Itoa(r.legacyErrors())+" row(s): data corruption", true)
	case len(r.m.Samples) == 0 && (r.header || r.banner):
		r.failWith(ClassTruncated, "nccl-tests: output ends before any result row", true)
	case len(r.m.Samples) == 0:
		r.failWith(ClassNoResults, "nccl-tests: no result table", true)
	case !r.footer && r.cutShort():
	case !r.footer:
		r.warn("no footer (Out of bounds / Avg bus bandwidth): output may be truncated")
	}
	r.m.OK = !r.fail
}

// legacyErrors counts rows whose legacy "error" exceeds the tool's own
// tolerance for the row's data type.
func (r *ncclRun) legacyErrors() int {
	ranks := r.maxRank
	if ranks < 1 {
		ranks = 1
	}
	n := 0
	for _, s := range r.m.Samples {
		lim := ncclDeltaMax(s.DataType) * float64(ranks)
		if (s.MaxError != nil && *s.MaxError > lim) || (s.InplaceMaxError != nil && *s.InplaceMaxError > lim) {
			n++
		}
	}
	return n
}

// cutShort fails a run whose table, without a footer, stops before the
// banner's maxBytes: the tool was killed mid-sweep, so the sizes that
// matter most were never measured.
func (r *ncclRun) cutShort() bool {
	last, max, cut := r.ncclSweepCut()
	if cut {
		r.failWith(ClassTruncated, "nccl-tests: output ends at "+strconv.FormatInt(last, 10)+
			" bytes, before the sweep's maxBytes "+strconv.FormatInt(max, 10)+" (run killed or log cut short)", true)
	}
	return cut
}
