package runner

import (
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
)

// configuredTransport is the transport a side can only have used, from its
// tool and environment, for when its output names none: iperf3 is TCP by
// construction; UCX restricted by UCX_TLS to TCP (and local-only
// transports) has nothing else to use. nil when the setup leaves a choice.
func configuredTransport(tool string, env map[string]string) *parsers.Transport {
	if tool == scenarios.ToolIperf3 {
		return &parsers.Transport{Kind: parsers.TransportTCP, Source: "iperf3", Detail: "tcp", Evidence: []string{"iperf3 measures TCP"}}
	}
	tls, ok := env["UCX_TLS"]
	if !ok || !tcpOnlyTLS(tls) {
		return nil
	}
	return &parsers.Transport{Kind: parsers.TransportTCP, Source: "ucx", Detail: "tcp", Evidence: []string{"UCX_TLS=" + tls}}
}

// tcpOnlyTLS is true when UCX_TLS allows tcp and no network transport
// other than it (self, shared memory and copies stay on the host).
func tcpOnlyTLS(tls string) bool {
	hasTCP := false
	for _, tl := range strings.Split(tls, ",") {
		switch strings.TrimSpace(tl) {
		case "tcp":
			hasTCP = true
		case "self", "sm", "shm", "posix", "sysv", "cma", "knem", "xpmem", "cuda_copy", "rocm_copy":
		default:
			return false
		}
	}
	return hasTCP
}
