package tools

// DefaultUCXTest and DefaultUCXIterations are used when the test does not
// say: ucx_perftest's own -n default (1,000,000) would make a 1 MiB run over
// TCP take many minutes.
const (
	DefaultUCXTest       = "tag_bw"
	DefaultUCXIterations = 10000
)

// buildUCX: the client's parameters define the test (the server adopts
// them), so the server gets only its port; transports are chosen through
// UCX_TLS (and UCX_NET_DEVICES from the endpoint's device) on both sides.
// The server is ready when its port is in the listen table (never probe it:
// it accepts exactly one connection). The client prints the result table.
//
//	ucx_perftest -p PORT
//	ucx_perftest ${addr:SERVER} -p PORT -t TEST -s SIZE -n ITERS
//
// No -P 0: Debian's ucx-utils is built without MPI and would reject it; an
// MPI-enabled build needs args.extra: ["-P", "0"].
func buildUCX(leg *Leg) ([]Command, error) {
	a := &leg.Test.Args
	port := portOr(leg.Port, 13337)
	srv := append([]string{"ucx_perftest", "-p", leg.itoa(port)}, a.Extra...)
	cli := []string{"ucx_perftest", leg.addr(leg.Server.Name), "-p", leg.itoa(port), "-t", ucxTest(a.Test)}
	if leg.Size > 0 {
		cli = append(cli, "-s", leg.i64toa(leg.Size))
	}
	cli = append(cli, "-n", leg.itoa(ucxIterations(a.Iterations)))
	cli = append(cli, a.Extra...)
	return []Command{
		{Endpoint: leg.Server.Name, Role: RoleServer, Argv: srv, Env: ucxEnv(a, leg.Server), Port: port, Ready: ReadyListen},
		{Endpoint: leg.Client.Name, Role: RoleClient, Argv: cli, Env: ucxEnv(a, leg.Client), Parse: true},
	}, nil
}

func ucxTest(t string) string {
	if t == "" {
		return DefaultUCXTest
	}
	return t
}

func ucxIterations(n int) int {
	if n > 0 {
		return n
	}
	return DefaultUCXIterations
}
