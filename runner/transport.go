package runner

import (
	"strings"

	"github.com/rdmabench/rdmabench/tool"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// configuredTransport is the transport a side can only have used, from its
// tool and environment, for when its output names none: iperf3 is TCP and
// rping (librdmacm) RDMA by construction; UCX restricted by UCX_TLS to TCP,
// or to verbs transports (with local-only ones), has nothing else to use.
// nil when the setup leaves a choice.
func configuredTransport(tool string, env map[string]string) *parsers.Transport {
	if tr := tools.Transport(tool); tr != nil {
		return tr
	}
	tls, ok := env["UCX_TLS"]
	if !ok {
		return nil
	}
	switch onlyTLS(tls) {
	case parsers.TransportTCP:
		return &parsers.Transport{Kind: parsers.TransportTCP, Source: "ucx", Detail: "tcp", Evidence: []string{"UCX_TLS=" + tls}}
	case parsers.TransportRDMA:
		return &parsers.Transport{Kind: parsers.TransportRDMA, Source: "ucx", Detail: strings.TrimSpace(tls), Evidence: []string{"UCX_TLS=" + tls}}
	}
	return nil
}

// onlyTLS is the one network transport kind UCX_TLS allows (tcp, or rdma
// for verbs transports), "" when it allows both, neither, or a set it does
// not name (an exclusion list "^…", "all"); self, shared memory and copies
// stay on the host and do not count.
func onlyTLS(tls string) string {
	kind := ""
	for _, tl := range strings.Split(tls, ",") {
		k := ""
		tl = strings.TrimSpace(tl)
		if tool.IsLocalTransport(tl) {
			continue
		}
		switch tl {
		case "tcp":
			k = parsers.TransportTCP
		case "rc", "rc_v", "rc_verbs", "rc_x", "rc_mlx5", "dc", "dc_x", "dc_mlx5", "ud", "ud_v", "ud_verbs", "ud_x", "ud_mlx5", "ib":
			k = parsers.TransportRDMA
		default:
			return ""
		}
		if kind != "" && kind != k {
			return ""
		}
		kind = k
	}
	return kind
}

// addTransport fills the transport evidence the parsers leave out:
// perftest's header (perftest runs only over RDMA verbs), else the UCX or
// NCCL debug lines anywhere in the output (parsers.DetectTransport), so a
// test that expects `transport: rdma` is judged on what the tool said.
func addTransport(ms []parsers.Measurement, raw []byte) {
	var detected *parsers.Transport
	scanned := false
	for i := range ms {
		if ms[i].Transport != nil {
			continue
		}
		if t := parsers.PerftestTransport(ms[i]); t != nil {
			ms[i].Transport = t
			continue
		}
		if !scanned {
			detected, scanned = parsers.DetectTransport(string(raw)), true
		}
		ms[i].Transport = detected
	}
}

// requires is the transport a test asked for, "rdma" or "tcp", as the
// report shows it (a TCP result of a "tcp" test is no fallback).
func (r *run) requires(test, tool string) string {
	t := r.tests[test]
	if t != nil && t.Requires != "" {
		return t.Requires
	}
	if tools.NeedsRDMA(t, tool) {
		return "rdma"
	}
	return "tcp"
}
