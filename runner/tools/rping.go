package tools

import (
	"time"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/scenarios"
)

var rpingSpec = Spec{
	Transport: &parsers.Transport{Kind: parsers.TransportRDMA, Source: "rping", Detail: "RDMA CM", Evidence: []string{"rping runs only over RDMA CM (librdmacm)"}},
	build:     buildRping, work: rpingWork, pinnedKiB: messagePinnedKiB,
	overSRD: func(*scenarios.Test) string {
		return "rping connects an RC queue pair through RDMA CM: EFA carries SRD, not RC"
	}}

// DefaultPings is rping's -C when the test gives no count: rping's own
// default (0) pings forever.
const DefaultPings = 10

// buildRping: the server binds its own data address; the client names the
// server's. The port is RDMA-CM (not in the TCP listen table), so the
// server's readiness is "retry": the client fails fast (exit 255, REJECTED)
// while no server listens and is retried. The client's "ping data" lines are
// parsed.
//
//	rping -s -a ${addr:SELF} -p PORT -v -C N [-S SIZE]
//	rping -c -a ${addr:SERVER} -p PORT -v -C N [-S SIZE]
//
// A cross-rail leg (args.crossRails) binds the client to its rail's
// address (-I) and names the server's rail: RDMA CM then connects that
// NIC to that remote NIC, or fails where the fabric has no route between
// them.
//
//	rping -c -I ${addr:CLIENT#i} -a ${addr:SERVER#j} -p PORT -v -C N
func buildRping(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	port := portOr(leg.Port, spec.DefaultPort)
	server := Command{Endpoint: leg.Server.Name, Role: RoleServer,
		Argv: rpingArgv(leg, "-s", "", leg.addr(leg.Server.Name), port), Port: port, Ready: ReadyRetry}
	source := ""
	if leg.CrossRail {
		source = leg.addr(leg.Client.Name)
	}
	client := Command{Endpoint: leg.Client.Name, Role: RoleClient,
		Argv: rpingArgv(leg, "-c", source, leg.addr(leg.Server.Name), port), Parse: true}
	return append(dst, server, client), nil
}

func rpingArgv(leg *Leg, role, source, address string, port int) []string {
	a := &leg.Test.Args
	count := a.Count
	if count <= 0 {
		count = DefaultPings
	}
	argv := []string{"rping", role}
	if source != "" {
		argv = append(argv, "-I", source)
	}
	argv = append(argv, "-a", address, "-p", leg.itoa(port), "-v", "-C", leg.itoa(count))
	if leg.Size > 0 {
		argv = append(argv, "-S", leg.i64toa(leg.Size))
	}
	return append(argv, a.Extra...)
}

// rpingWork: about 100 ms a ping under software emulation.
func rpingWork(_ *Spec, t *scenarios.Test, _ int64) time.Duration {
	return time.Duration(max(t.Args.Count, DefaultPings)) * 100 * time.Millisecond
}
