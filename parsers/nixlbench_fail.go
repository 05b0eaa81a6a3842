package parsers

import (
	"strconv"
	"strings"
)

// nixlSignature maps a message nixlbench, NIXL or a CI wrapper prints on
// failure to its class. Order matters: the first match wins.
type nixlSignature struct {
	text  string
	class ErrorClass
}

var nixlSignatures = []nixlSignature{
	{"Consistency check failed", ClassDataError},
	{"is greater than or equal to global size", ClassParameterMismatch},
	{"Failed to connect to ETCD", ClassConnectionFailed},
	{"Failed to acquire lock", ClassConnectionFailed},
	{"Failed to start etcd keepalive", ClassConnectionFailed},
	{"Failed to register rank key", ClassConnectionFailed},
	{"Failed to setup ETCD runtime", ClassConnectionFailed},
	{"in etcd: ", ClassConnectionFailed},
	{"loadRemoteMD failed", ClassConnectionFailed},
	{"Timeout waiting for", ClassTimeout},
	{"Error in barrier", ClassTimeout},
	{"Failed to synchronize", ClassTimeout},
	{"key missing (or etcd error)", ClassTimeout},
	{"peer liveness check failed", ClassTimeout},
	{"Ctrl-C received", ClassTimeout},
	{"Unsupported NIXLBench backend", ClassUsageError},
	{"Invalid op type", ClassUsageError},
	{"Invalid runtime", ClassUsageError},
	{"Invalid segment type", ClassUsageError},
	{"Invalid total ", ClassUsageError},
	{"Incorrect buffer size configuration", ClassUsageError},
	{"Incorrect device list", ClassUsageError},
	{"Failed to parse device list", ClassUsageError},
	{"unknown command line flag", ClassUsageError},
	{"is disabled for nixlbench", ClassUsageError},
	{"VRAM not supported without", ClassNoDevice},
	// NCCL under UCCL's tcp transport: two ranks on one GPU.
	{"Duplicate GPU detected", ClassUsageError},
	{"ncclCommInitPeer failed", ClassUsageError},
	{"Transfer failed", ClassToolError},
	{"NIXL_ERR_", ClassToolError},
	{"Segmentation fault", ClassToolError},
	{"terminate called", ClassToolError},
	// rdmabench-nixl's own words (probe/nixl).
	{"rdmabench-nixl: waited for ", ClassTimeout},
	{"did not finish within", ClassTimeout},
	{"the data did not arrive", ClassDataError},
	{"rdmabench-nixl: error: ", ClassUsageError}, // argparse's, and the probe's exit 2
	{"rdmabench-nixl: ", ClassToolError},
}

// nixlFailure classifies a line; generic "Failed to …" and a wrapper's exit
// status are not specific and give way to a precise message.
func nixlFailure(line string) (ErrorClass, bool, bool) {
	for _, s := range nixlSignatures {
		if strings.Contains(line, s.text) {
			return s.class, true, true
		}
	}
	if line == "Terminated" || line == "Killed" || strings.HasPrefix(line, "Sending interrupt signal to process") {
		return ClassTimeout, true, true
	}
	if i := strings.Index(line, "returned exit code "); i >= 0 {
		code, err := strconv.Atoi(strings.TrimSpace(line[i+len("returned exit code "):]))
		switch {
		case err != nil || code == 0:
		case code == 124 || code == 130 || code == 137 || code == 143:
			return ClassTimeout, false, true
		default:
			return ClassToolError, false, true
		}
	}
	if strings.HasPrefix(line, "Failed to ") || strings.Contains(line, "] Failed to ") {
		return ClassToolError, false, true
	}
	return ClassNone, false, false
}

// otherLine handles start-up lines, failures and backend log lines.
func (p *nixlParser) otherLine(raw, line string) {
	if strings.HasPrefix(line, "WARNING: Adjusting num_iter") || strings.HasPrefix(line, "Connecting to ETCD") {
		p.nextRun() // a new process starts: a finished table belongs to an earlier run
		return
	}
	if cls, specific, ok := nixlFailure(line); ok {
		p.run().failWith(cls, line, specific)
		return
	}
	switch {
	case strings.HasPrefix(line, "Init nixl worker"):
		r := p.run()
		if strings.Contains(line, "type initiator") {
			r.m.Side, r.target = "initiator", false
		} else if strings.Contains(line, "type target") && r.m.Side == "" {
			r.target = true
		}
		if i := strings.Index(line, "hostname "); i >= 0 && r.m.Side == "initiator" {
			ncclSetInfo(&r.m, "hostname", strings.TrimSpace(line[i+len("hostname "):]))
		}
	case strings.HasPrefix(line, "RdmaDeviceManager: Found 0 RDMA device"):
		// UCCL's RDMA transport with no device: it crashes without a word
		// more, so the run's error says it (close).
		p.run().noRDMA = true
	case strings.HasPrefix(line, "ETCD Runtime: Registered as rank "):
		f := strings.Fields(line)
		if n, err := strconv.Atoi(f[len(f)-1]); err == nil && n > 0 {
			p.run().m.Ranks = n
		}
	case strings.Contains(line, "UCX  WARN") || strings.Contains(line, "UCX  ERROR") || strings.HasPrefix(line, "[WARN "):
		p.transport.observe(raw)
		if p.cur != nil {
			p.cur.warn(ncclAfterAny(line))
		}
	default:
		p.transport.observe(raw)
	}
}

// ncclAfterAny drops a UCX log prefix ("[time] [host:pid:tid] file:line")
// so that the same warning from several processes is kept once.
func ncclAfterAny(line string) string {
	if i := strings.Index(line, "UCX  "); i >= 0 {
		return strings.TrimSpace(line[i:])
	}
	return line
}

// close decides the verdict: success needs the configured rows and no
// failure line.
func (r *nixlRun) close() {
	if r.m.Samples == nil {
		r.m.Samples = []Sample{}
	}
	n := len(r.m.Samples)
	want := nixlExpectedRows(r.m.Info)
	switch {
	case r.fail:
	case n == 0 && r.target:
		r.failWith(ClassNoResults, "nixlbench: only a target rank's output; targets print no results (parse the initiator, rank 0)", true)
	case n == 0 && (r.config || r.cols != nil):
		r.failWith(ClassTruncated, "nixlbench: output ends before any result row", true)
	case n == 0 && r.noRDMA:
		r.failWith(ClassNoDevice, "nixlbench: no result table after UCCL found no RDMA device (RdmaDeviceManager: Found 0 RDMA device(s)); on a host without one UCCL needs UCCL_P2P_TRANSPORT=tcp", true)
	case n == 0:
		r.failWith(ClassNoResults, "nixlbench: no result table", true)
	case want > 0 && n < want:
		r.failWith(ClassTruncated, "nixlbench: "+strconv.Itoa(n)+" of "+strconv.Itoa(want)+" configured rows printed", true)
	}
	r.m.OK = !r.fail
}

// finish closes the runs and attaches the transport evidence.
func (p *nixlParser) finish() []Measurement {
	t := p.transport.result()
	if len(p.runs) == 0 {
		m := Measurement{Tool: "nixlbench", Test: "nixlbench", ErrorClass: ClassNoResults,
			Error: "no nixlbench output found", Samples: []Sample{}, Transport: t}
		if p.lines > 0 {
			m.ErrorClass = ClassUnknownFormat
			m.Error = "text is not nixlbench output: no configuration block, table or failure line"
		}
		return []Measurement{m}
	}
	out := make([]Measurement, 0, len(p.runs))
	for _, r := range p.runs {
		r.close()
		if t != nil {
			own := *t // each run's op and memory pick its path
			own.ForPath(UCXPathKey(r.m.Op, r.m.Info["initiator_seg_type"], r.m.Info["target_seg_type"]))
			r.m.Transport = &own
		}
		out = append(out, r.m)
	}
	return out
}
