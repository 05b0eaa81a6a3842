package tools

// DefaultIperf3Secs is iperf3's -t when the test gives no duration.
const DefaultIperf3Secs = 10

// buildIperf3: a one-shot server (-1) on the planner's port, ready when the
// port is listening; the client writes JSON (-J), which is parsed.
//
//	iperf3 -s -1 -p PORT
//	iperf3 -c ${addr:SERVER} -p PORT -t SECS -J [-P N] [--bidir]
func buildIperf3(spec Spec, leg *Leg) ([]Command, error) {
	a := &leg.Test.Args
	port := portOr(leg.Port, spec.DefaultPort)
	srv := append([]string{"iperf3", "-s", "-1", "-p", leg.itoa(port)}, a.Extra...)
	cli := []string{"iperf3", "-c", leg.addr(leg.Server.Name), "-p", leg.itoa(port), "-t", leg.itoa(iperf3Secs(leg)), "-J"}
	if a.Streams > 1 {
		cli = append(cli, "-P", leg.itoa(a.Streams))
	}
	if a.Bidirectional {
		cli = append(cli, "--bidir")
	}
	cli = append(cli, a.Extra...)
	return []Command{
		{Endpoint: leg.Server.Name, Role: RoleServer, Argv: srv, Port: port, Ready: ReadyListen},
		{Endpoint: leg.Client.Name, Role: RoleClient, Argv: cli, Parse: true},
	}, nil
}

func iperf3Secs(leg *Leg) int {
	if s := durationSecs(leg.Test.Args.Duration); s > 0 {
		return s
	}
	return DefaultIperf3Secs
}
