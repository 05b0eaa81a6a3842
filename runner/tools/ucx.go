package tools

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/scenarios"
)

var ucxPerftestSpec = Spec{build: buildUCX, work: ucxWork, pinnedKiB: messagePinnedKiB, overSRD: ucxOverSRD}

// UCXSRDSince and UCXSRDWriteSince are the UCX releases with an EFA
// transport, srd (openucx/ucx src/uct/ib/efa/srd, built --with-efa where
// rdma-core's efadv is found): 1.19.0 brought it with active messages and
// RMA READ (get), 1.20.0 RMA WRITE (put), flush and fence, and EFA's
// GPUDirect detection (UCX NEWS).
const (
	UCXSRDSince      = "1.19.0"
	UCXSRDWriteSince = "1.20.0"
)

// ucxOverSRD: UCX drives EFA only through its srd transport; rc, dc and ud
// do not, and an unset UCX_TLS lets UCX pick among them.
func ucxOverSRD(t *scenarios.Test) string {
	for _, tl := range strings.Split(t.Args.Transports, ",") {
		if strings.EqualFold(strings.TrimSpace(tl), "srd") {
			return ""
		}
	}
	return "UCX's verbs transports (rc, dc, ud) do not drive EFA: UCX " + UCXSRDSince + " and later have an EFA transport, srd (RMA WRITE from " +
		UCXSRDWriteSince + "; built --with-efa): set args.transports: srd with such a UCX, or test EFA with nixlbench over LIBFABRIC or NCCL through aws-ofi-nccl"
}

// scenarios.DefaultUCXTest and DefaultUCXIterations are used when the test does not
// say: ucx_perftest's own -n default (1,000,000) would make a 1 MiB run over
// TCP take many minutes.
const (
	DefaultUCXIterations = 10000
)

// buildUCX: the client's parameters define the test (the server adopts
// them), so the server gets only its port; transports are chosen through
// UCX_TLS (and UCX_NET_DEVICES from the endpoint's device) on both sides;
// where the scenario names none, the client logs UCX's choice.
// The server is ready when its port is in the listen table (never probe it:
// it accepts exactly one connection). The client prints the result table.
//
//	ucx_perftest -p PORT
//	ucx_perftest ${addr:SERVER} -p PORT -t TEST -s SIZE -n ITERS
//
// No -P 0: Debian's ucx-utils is built without MPI and would reject it; an
// MPI-enabled build needs args.extra: ["-P", "0"].
func buildUCX(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	a := &leg.Test.Args
	port := portOr(leg.Port, spec.DefaultPort)
	srv := append([]string{"ucx_perftest", "-p", leg.itoa(port)}, a.Extra...)
	cli := []string{"ucx_perftest", leg.addr(leg.Server.Name), "-p", leg.itoa(port), "-t", ucxTest(a.Test)}
	if leg.Size > 0 {
		cli = append(cli, "-s", leg.i64toa(leg.Size))
	}
	cli = append(cli, "-n", leg.itoa(ucxIterations(a.Iterations)))
	cli = append(cli, a.Extra...)
	// Each side its own GPU where endpoints share a host's (-m cuda: UCX's
	// cuda_ipc between two GPUs, a layer of the one-host waterfall).
	return append(dst,
		Command{Endpoint: leg.Server.Name, Role: RoleServer, Argv: srv, Env: withVisibleGPUs(leg, leg.Server, ucxEnv(leg, a, leg.Server)),
			Port: port, Ready: ReadyListen},
		Command{Endpoint: leg.Client.Name, Role: RoleClient, Argv: cli, Parse: true,
			Env: withVisibleGPUs(leg, leg.Client, ucxChoiceLogged(leg, a, ucxEnv(leg, a, leg.Client)))},
	), nil
}

// ucxChoiceLogged asks UCX to say what it chose where the scenario leaves
// it the choice (no transports): its INFO log names the transports of
// each endpoint configuration ("ep_cfg[0]: tag(sysv/memory cma/memory)"),
// the evidence the report's transport comes from. A UCX_LOG_LEVEL the
// scenario sets is left to it.
func ucxChoiceLogged(leg *Leg, a *scenarios.Args, env map[string]string) map[string]string {
	if a.Transports != "" || leg.scenarioSets(leg.Client, "UCX_LOG_LEVEL") {
		return env
	}
	if env == nil {
		env = map[string]string{}
	}
	env["UCX_LOG_LEVEL"] = "info"
	return env
}

func ucxTest(t string) string {
	if t == "" {
		return scenarios.DefaultUCXTest
	}
	return t
}

func ucxIterations(n int) int {
	if n > 0 {
		return n
	}
	return DefaultUCXIterations
}

// ucxWork: the iterations at the floor rate, plus a per-iteration cost.
func ucxWork(_ *Spec, t *scenarios.Test, size int64) time.Duration {
	n := ucxIterations(t.Args.Iterations)
	return transfer(float64(n)*float64(max(size, 8))) + time.Duration(n)*perIteration/10
}

// UCXPerftestSize is the message size a ucx_perftest command sends (-s N
// or -sN, the last wins), 0 when it names none or a scatter list ("-s
// 1024,2048"): its client prints no size.
func UCXPerftestSize(argv []string) int64 {
	var size int64
	for i := 0; i < len(argv); i++ {
		val := ""
		switch {
		case argv[i] == "-s" && i+1 < len(argv):
			i++
			val = argv[i]
		case len(argv[i]) > 2 && strings.HasPrefix(argv[i], "-s"):
			val = argv[i][2:]
		default:
			continue
		}
		size, _ = strconv.ParseInt(val, 10, 64) // a list is not one size: 0
	}
	return max(size, 0)
}

// UCXPerftestPath is the remote-memory path a ucx_perftest client command
// times: "READ" for ucp_get, "WRITE" for the ucp_put tests, "" for the
// others (tag, stream, active messages: no RMA table is theirs); and the
// memory types of its buffers from -m SEND[,RECV] ("host" without -m).
// UCX's protocol tables name memory so ("cuda/GPU1", "host memory").
func UCXPerftestPath(argv []string) (op string, mems []string) {
	mems = []string{"host"}
	for i := 0; i < len(argv); i++ {
		// getopt's forms: "-t ucp_get" and "-tucp_get"; the last wins.
		flag, val := argv[i], ""
		if len(flag) > 2 && (strings.HasPrefix(flag, "-t") || strings.HasPrefix(flag, "-m")) {
			flag, val = flag[:2], flag[2:]
		} else if (flag == "-t" || flag == "-m") && i+1 < len(argv) {
			i++
			val = argv[i]
		}
		switch flag {
		case "-t":
			switch {
			case val == "ucp_get":
				op = "READ"
			case strings.HasPrefix(val, "ucp_put"):
				op = "WRITE"
			default:
				op = ""
			}
		case "-m":
			mems = nil
			for _, m := range strings.Split(val, ",") {
				if m = strings.TrimSpace(m); m != "" && !slices.Contains(mems, m) {
					mems = append(mems, m)
				}
			}
		}
	}
	return op, mems
}
