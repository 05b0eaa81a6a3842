package tools

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
)

// nccl-tests defaults written explicitly into every command line.
const (
	DefaultNCCLCollective = "all_reduce"
	DefaultNCCLMinBytes   = 8
	DefaultNCCLMaxBytes   = 1 << 30
	DefaultNCCLStepFactor = 2
	// NCCLJSON is the JSON result file nccl-tests writes (-J) on rank 0.
	NCCLJSON = PlaceholderOut + "/nccl.json"
)

// NCCLBinary is the nccl-tests binary of a collective ("all_reduce" →
// "all_reduce_perf").
func NCCLBinary(collective string) string {
	if collective == "" {
		collective = DefaultNCCLCollective
	}
	return strings.TrimSuffix(collective, "_perf") + "_perf"
}

// NCCL's bootstrap and the MPI launcher's ssh, for jobs over several hosts.
const (
	// DefaultNCCLPort is the port of NCCL_COMM_ID (the bootstrap root on
	// the first rank); the planner counts up from it for concurrent jobs.
	DefaultNCCLPort = 29500
	// MPISSHPort is the port of the per-run sshd on every non-launcher
	// rank (not 22: a host's or an image's own sshd may hold that).
	MPISSHPort = 2222
	// MPIDir holds the per-run key pair, the sshd's config, host key and
	// pid file on every rank's endpoint.
	MPIDir = "/tmp/rdmabench-" + PlaceholderRun + "/ssh"
	// MPIKey is the launcher's private key, MPIMarker the environment
	// variable every process of the job carries (sshd's SetEnv, the
	// launcher's env), so that clean-up finds orted and the ranks.
	MPIKey    = MPIDir + "/id_ed25519"
	MPIMarker = "RDMABENCH_MPI"
)

// SSHDCapabilities are what the MPI launcher's per-run sshd needs in a
// pod that drops every other capability: running as root it separates
// privileges before authenticating anyone, in a child that chroots to
// /run/sshd (SYS_CHROOT) and changes to the sshd user (SETUID, SETGID;
// the session sets its groups again). Without them it refuses the
// connection ("chroot(\"/run/sshd\"): Operation not permitted"); with
// them alone and IPC_LOCK, the launch works (tested with setpriv on
// OpenSSH 9.2). The planner adds them only to pools with remote ranks.
var SSHDCapabilities = []string{"SETUID", "SETGID", "SYS_CHROOT"}

var installNCCL = installOf(tool.NCCL)

var ncclSpec = Spec{
	program: func(t *scenarios.Test) string {
		if t == nil {
			return NCCLBinary(tool.NCCL)
		}
		return NCCLBinary(t.Args.Collective)
	},
	build: buildNCCL, work: ncclWork, probes: func(t *scenarios.Test) []Probe {
		return []Probe{NCCLLoadsProbe(NCCLBinary(t.Args.Collective))}
	}}

// buildNCCL: one command. On one endpoint it drives all of that
// endpoint's GPUs from one process:
//
//	all_reduce_perf -b MIN -e MAX -f 2 -g GPUS -c 1 -J ${out}/nccl.json
//
// Over several endpoints it is an Open MPI launcher on the first rank that
// starts one process per GPU on every endpoint (MPI=1 build of nccl-tests),
// forwarding the environment with -x. Ranks on other hosts are started
// through ssh, MPI Operator style: the runner puts a per-run key pair and
// an sshd on port 2222 into every rank's endpoint (Command.SSH) first:
//
//	mpirun --allow-run-as-root -np N×G --map-by slot -H ${addr:r0}:G,${addr:r1}:G,…
//	  --mca plm_rsh_agent ssh --mca plm_rsh_args "-i KEY -p 2222 -o …" --mca plm_rsh_no_tree_spawn 1
//	  -x NCCL_COMM_ID -x NCCL_… -x PATH all_reduce_perf -b MIN -e MAX -f 2 -g 1 -c 1 -J ${out}/nccl.json
//
// NCCL_COMM_ID is the first rank's data address and the leg's port (NCCL's
// bootstrap root). MPI rank 0 runs on the first host listed, the launcher's
// own endpoint, so the JSON file lands in its ${out}; the launcher's output
// is parsed. Ranks that all share one address (the local backend) are
// started by mpirun itself, without ssh.
func buildNCCL(dst []Command, spec *Spec, leg *Leg) ([]Command, error) {
	ranks := leg.Ranks
	if len(ranks) == 0 {
		ranks = []endpoint.Endpoint{leg.Client}
	}
	first := ranks[0]
	env := ncclDebugEnv(leg, first)
	if len(ranks) == 1 {
		argv := ncclArgv(leg, gpusOf(first))
		return append(dst, Command{Endpoint: first.Name, Role: RoleRank, Argv: argv, Env: env, Parse: true}), nil
	}
	if env == nil {
		env = map[string]string{}
	}
	if !leg.scenarioSets(first, "NCCL_COMM_ID") {
		env["NCCL_COMM_ID"] = leg.rankAddr(first) + ":" + leg.itoa(portOr(leg.Port, spec.DefaultPort))
	}
	ncclIBEnv(leg, ranks, env)
	var ssh *SSHLaunch
	if !sameAddress(ranks) {
		ssh = &SSHLaunch{Port: MPISSHPort + max(0, leg.Port-DefaultNCCLPort), Dir: MPIDir}
		env[MPIMarker] = PlaceholderRun
	}
	argv := mpirunArgv(leg, ranks, env, ssh)
	argv = append(argv, ncclArgv(leg, 1)...)
	return append(dst, Command{Endpoint: first.Name, Role: RoleRank, Argv: argv, Env: env, Parse: true, SSH: ssh}), nil
}

// ncclIBEnv names the ranks' RDMA devices and GID to NCCL, so that it uses
// each rank's own device and the data interface's GID rather than what it
// finds first: NCCL_IB_HCA "=dev:port,…" (exact names), NCCL_IB_GID_INDEX
// when the ranks share one (NCCL takes one value for every rank). Both
// are placeholders where the devices are chosen at run time; the
// scenario's own settings stand; nothing for ranks without a known device,
// nor under Google's gIB plugin (UsesGIB), which picks its own NICs and GID.
func ncclIBEnv(leg *Leg, ranks []endpoint.Endpoint, env map[string]string) {
	if leg.Test.Requires == scenarios.RequiresTCP || leg.EnvFor != nil && UsesGIB(leg.EnvFor(ranks[0].Name)) {
		return
	}
	var hcas, names []string
	gid, sameGID, runtime := "", true, false
	for i, r := range ranks {
		h := leg.hca(r)
		if h == "" {
			return
		}
		if !slices.Contains(hcas, h) {
			hcas = append(hcas, h)
		}
		names = append(names, r.Name)
		g := leg.gid(r)
		runtime = runtime || strings.HasPrefix(g, "${")
		if i == 0 {
			gid = g
		}
		sameGID = sameGID && g == gid
	}
	if !leg.scenarioSets(ranks[0], "NCCL_IB_HCA") {
		env["NCCL_IB_HCA"] = "=" + strings.Join(hcas, ",")
	}
	if leg.scenarioSets(ranks[0], "NCCL_IB_GID_INDEX") {
		return
	}
	switch {
	case runtime:
		env["NCCL_IB_GID_INDEX"] = GIDsPlaceholder(names)
	case sameGID && gid != "":
		env["NCCL_IB_GID_INDEX"] = gid
	}
}

// SSHLaunch asks the runner to make ranks reachable by the launcher's ssh
// before the command starts (and to undo it after): a per-run key pair in
// Dir on every rank, an sshd on Port at each other rank's data address.
type SSHLaunch struct {
	Port int    `json:"port"`
	Dir  string `json:"dir"`
}

// sameAddress: every rank's address is known at plan time and the same
// (local endpoints), so mpirun starts every rank itself.
func sameAddress(ranks []endpoint.Endpoint) bool {
	for _, r := range ranks {
		if r.Address == "" || r.Address != ranks[0].Address {
			return false
		}
	}
	return true
}

func (l *Leg) rankAddr(r endpoint.Endpoint) string {
	if r.Address != "" {
		return r.Address
	}
	return l.addr(r.Name)
}

func (l *Leg) scenarioSets(ep endpoint.Endpoint, name string) bool {
	if l.EnvFor == nil {
		return false
	}
	_, ok := l.EnvFor(ep.Name)[name]
	return ok
}

// SSHArgs is plm_rsh_args: the per-run key, the per-run sshd's port, and no
// host-key prompt or known_hosts entry (the host keys are per run too).
func SSHArgs(s *SSHLaunch) string {
	return "-i " + s.Dir + "/id_ed25519 -p " + strconv.Itoa(s.Port) +
		" -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR"
}

func gpusOf(ep endpoint.Endpoint) int {
	if ep.GPUs > 0 {
		return ep.GPUs
	}
	return 1
}

func ncclArgv(leg *Leg, gpus int) []string {
	a := &leg.Test.Args
	minB, maxB := SizeBytes(a.MinSize), SizeBytes(a.MaxSize)
	if leg.Size > 0 {
		minB, maxB = leg.Size, leg.Size
	}
	if minB <= 0 {
		minB = DefaultNCCLMinBytes
	}
	if maxB <= 0 {
		maxB = max(int64(DefaultNCCLMaxBytes), minB)
	}
	f := a.StepFactor
	if f <= 1 {
		f = DefaultNCCLStepFactor
	}
	argv := []string{NCCLBinary(a.Collective), "-b", leg.i64toa(minB), "-e", leg.i64toa(maxB),
		"-f", leg.itoa(f), "-g", leg.itoa(gpus)}
	if a.Iterations > 0 {
		argv = append(argv, "-n", leg.itoa(a.Iterations))
	}
	if a.DataType != "" {
		argv = append(argv, "-d", a.DataType)
	}
	argv = append(argv, "-c", "1", "-J", NCCLJSON)
	return append(argv, a.Extra...)
}

// mpirunArgv is the Open MPI launcher of ranks: one slot per GPU, endpoints
// that share an address (known at plan time for local and ssh endpoints)
// merged into one host entry (-H 127.0.0.1:2, not
// 127.0.0.1:1,127.0.0.1:1, which Open MPI counts as one node and refuses
// under -N 1), ranks placed by slot so that each host gets exactly its
// slots. The environment is forwarded with -x, names sorted.
func mpirunArgv(leg *Leg, ranks []endpoint.Endpoint, extra map[string]string, ssh *SSHLaunch) []string {
	var order []string
	slots := map[string]int{}
	total := 0
	for _, r := range ranks {
		a := leg.rankAddr(r) // known when planned for local and ssh endpoints, a pod's once it runs
		if _, seen := slots[a]; !seen {
			order = append(order, a)
		}
		slots[a] += gpusOf(r)
		total += gpusOf(r)
	}
	hosts := make([]string, len(order))
	for i, a := range order {
		hosts[i] = a + ":" + leg.itoa(slots[a])
	}
	argv := []string{"mpirun", "--allow-run-as-root", "-np", leg.itoa(total), "--map-by", "slot",
		"-H", strings.Join(hosts, ",")}
	if ssh != nil {
		// Only the launcher uses ssh (no tree spawn): the key and the
		// port are the per-run ones on every rank.
		argv = append(argv, "--mca", "plm_rsh_agent", "ssh", "--mca", "plm_rsh_args", SSHArgs(ssh),
			"--mca", "plm_rsh_no_tree_spawn", "1")
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	if leg.EnvFor != nil {
		for k := range leg.EnvFor(ranks[0].Name) {
			if _, dup := extra[k]; !dup {
				keys = append(keys, k)
			}
		}
	}
	if ssh != nil && !slices.Contains(keys, "PATH") {
		// sshd gives remote ranks a login PATH; the tools live where the
		// launcher's PATH says (an image's build/ folder).
		keys = append(keys, "PATH")
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k == MPIMarker {
			continue // sshd's SetEnv gives it to remote processes
		}
		argv = append(argv, "-x", k)
	}
	return argv
}

func ncclWork(_ *Spec, t *scenarios.Test, size int64) time.Duration {
	a := &t.Args
	minB, maxB := SizeBytes(a.MinSize), SizeBytes(a.MaxSize)
	if size > 0 {
		minB, maxB = size, size
	}
	if minB <= 0 {
		minB = DefaultNCCLMinBytes
	}
	if maxB <= 0 {
		maxB = max(int64(DefaultNCCLMaxBytes), minB)
	}
	f := int64(max(a.StepFactor, DefaultNCCLStepFactor))
	iters := max(a.Iterations, 20) + 2 // timed + warm-up + check
	var bytes float64
	for b := minB; b <= maxB && b > 0; b *= f {
		bytes += float64(b) * float64(iters) * 2
	}
	// GPUs move data far faster than the 1 Gb/s floor; count 1 GB/s.
	return time.Duration(steps(minB, maxB, f))*time.Second + transfer(bytes/8)
}
