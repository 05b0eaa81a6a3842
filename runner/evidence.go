package runner

import "github.com/rdmabench/rdmabench/parsers"

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
