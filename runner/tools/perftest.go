package tools

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

var installPerftest = installOf(tool.IBWriteBW)

// perftestSpec is the runner's part of every perftest binary (ib_write_bw,
// ib_read_lat …): they share a command line, a rendezvous (a TCP port, -p)
// and an output layout.
var perftestSpec = Spec{build: appendPerftest, work: perftestWork, pinnedKiB: messagePinnedKiB, perRail: true,
	probes: perftestProbes, overSRD: perftestOverSRD}

// perftestOverSRD: perftest connects RC queue pairs unless told -c SRD
// (or UD, for send tests), which EFA's perftest support takes.
func perftestOverSRD(t *scenarios.Test) string {
	switch strings.ToUpper(t.Args.ConnectionType) {
	case "SRD", "UD":
		return ""
	case "":
		return "it connects RC queue pairs (perftest's default -c RC): EFA carries SRD, not RC (set args.connection: SRD where your perftest supports EFA)"
	}
	return "connection " + strings.ToUpper(t.Args.ConnectionType) + " is not SRD, the only reliable transport of EFA"
}

// appendPerftest: the server runs the flags alone and listens on -p; the
// client runs the same flags with the server's address last (tools.md §6.1):
//
//	ib_write_bw -d DEV -i 1 -x GID -s SIZE|-a -n ITERS|-D SECS -q N -F --report_gbits -p PORT [-b] …
//
// The client's output is parsed: it prints a row per size for every test
// (the ib_read_lat server prints none). With -R the rendezvous moves to the
// RDMA-CM port space, invisible to the listen table, so readiness is "retry".
func appendPerftest(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	a := &leg.Test.Args
	if a.Sweep && leg.Size > 0 {
		return dst, fmt.Errorf("%s: args.sweep (-a) and args.sizes cannot be combined; use one of them", spec.Name)
	}
	if a.Sweep && a.Duration.IsSet() {
		return dst, fmt.Errorf("%s: args.sweep (-a) cannot be combined with args.duration (-D): perftest refuses it", spec.Name)
	}
	port := portOr(leg.Port, spec.DefaultPort)
	ready := ReadyListen
	if a.RDMACM {
		ready = ReadyRetry
	}
	server := Command{Endpoint: leg.Server.Name, Role: RoleServer,
		Argv: perftestArgv(spec, leg, leg.Server, port, ""), Port: port, Ready: ready}
	client := Command{Endpoint: leg.Client.Name, Role: RoleClient,
		Argv: perftestArgv(spec, leg, leg.Client, port, leg.addr(leg.Server.Name)), Parse: true}
	return append(dst, server, client), nil
}

// perftestArgv builds one side's argv; server is the address the client
// names last ("" on the server itself). It is built in a scratch array and
// copied once at its exact length (plans of big all-to-alls hold millions).
func perftestArgv(spec *Spec, leg *Leg, ep endpoint.Endpoint, port int, server string) []string {
	a := &leg.Test.Args
	bw := spec.Metric == parsers.MetricBandwidth
	var scratch [32]string
	argv := append(scratch[:0], spec.Name)
	if dev := leg.device(ep); dev != "" {
		argv = append(argv, "-d", dev)
	}
	argv = append(argv, "-i", leg.port(ep))
	if g := leg.gid(ep); g != "" {
		argv = append(argv, "-x", g)
	}
	switch {
	case a.Sweep:
		argv = append(argv, "-a")
	case leg.Size > 0:
		argv = append(argv, "-s", leg.i64toa(leg.Size))
	}
	if secs := durationSecs(a.Duration); secs > 0 {
		argv = append(argv, "-D", leg.itoa(secs))
	} else if a.Iterations > 0 {
		argv = append(argv, "-n", leg.itoa(a.Iterations))
	}
	if bw && a.QPs > 0 {
		argv = append(argv, "-q", leg.itoa(a.QPs))
	}
	argv = append(argv, "-F")
	if bw {
		argv = append(argv, "--report_gbits")
	}
	argv = append(argv, "-p", leg.itoa(port))
	if bw && a.Bidirectional {
		argv = append(argv, "-b")
	}
	if a.ConnectionType != "" {
		argv = append(argv, "-c", strings.ToUpper(a.ConnectionType))
	}
	if a.MTU > 0 {
		argv = append(argv, "-m", leg.itoa(a.MTU))
	}
	if a.RDMACM {
		argv = append(argv, "-R")
	}
	if a.UseCUDA != nil {
		argv = append(argv, "--use_cuda="+leg.itoa(*a.UseCUDA))
	}
	argv = append(argv, a.Extra...)
	if server != "" {
		argv = append(argv, server)
	}
	return slices.Clone(argv)
}

func perftestWork(spec *Spec, t *scenarios.Test, size int64) time.Duration {
	a := &t.Args
	if secs := durationSecs(a.Duration); secs > 0 {
		return time.Duration(secs) * time.Second
	}
	iters := a.Iterations
	if iters <= 0 {
		iters = 1000
		if spec.Name == scenarios.ToolIBWriteBW {
			iters = 5000
		}
	}
	bytes := float64(size)
	switch {
	case a.Sweep:
		bytes = 2 * (8 << 20) // 2 + 4 + … + 8 MiB
	case size <= 0 && spec.Metric == parsers.MetricBandwidth:
		bytes = 65536
	case size <= 0:
		bytes = 2
	}
	n := float64(iters) * float64(max(a.QPs, 1))
	rounds := 1
	if a.Sweep {
		rounds = 23
	}
	return transfer(n*bytes) + time.Duration(iters*rounds)*perIteration
}

// perftestProbes: --use_cuda where the test moves GPU memory.
func perftestProbes(t *scenarios.Test) []Probe {
	if t.Args.UseCUDA == nil {
		return nil
	}
	return []Probe{PerftestCUDAProbe(t.Tool)}
}
