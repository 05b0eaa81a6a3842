package runner

import (
	"os/exec"
	"strings"
	"testing"
)

// The stand-ins' command-line contracts (tools.md §3.1, §4.2, §4.5).
func TestStandinCommandLines(t *testing.T) {
	standins(t)
	cases := []struct {
		name   string
		argv   []string
		env    []string
		code   int
		stdout string
		stderr string
	}{
		{"nixl unknown flag", []string{"nixlbench", "--bogus_flag=1"}, nil, 1, "", "ERROR: unknown command line flag 'bogus_flag'"},
		{"nixl flagfile refused", []string{"nixlbench", "--flagfile=x"}, nil, 1, "", "--flagfile is disabled for nixlbench. Use --config_file instead."},
		{"nixl bad op", []string{"nixlbench", "--op_type=COPY"}, nil, 1, "Invalid op type: COPY. Must be one of [READ, WRITE]", ""},
		{"nixl iteration rounding and no etcd", []string{"nixlbench", "--etcd-endpoints", "http://127.0.0.1:1", "--check_consistency", "false"}, nil, 1,
			"WARNING: Adjusting num_iter to 1008 to allow equal distribution to 1 threads\nWARNING: Adjusting warmup_iter to 112 to allow equal distribution to 1 threads\nConnecting to ETCD at http://127.0.0.1:1", "Failed to setup ETCD runtime"},
		{"nccl unknown option exits 0", []string{"all_reduce_perf", "-q", "1"}, nil, 0, "invalid option '?'", "invalid option -- 'q'"},
		{"nccl bad size", []string{"all_reduce_perf", "-b", "12X"}, nil, 255, "invalid size specified for 'minbytes'", ""},
		{"nccl min > max", []string{"alltoall_perf", "-b", "1M", "-e", "1K"}, nil, 255, "invalid sizes for 'minbytes' and 'maxbytes': 1048576 > 1024", ""},
		{"nccl MIN_BW not met", []string{"sendrecv_perf", "-b", "1K", "-e", "1K", "-g", "2"}, []string{"NCCL_TESTS_MIN_BW=100000"}, 7, "FAILED", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = append(cmd.Environ(), c.env...)
			var out, errb strings.Builder
			cmd.Stdout, cmd.Stderr = &out, &errb
			_ = cmd.Run()
			if got := cmd.ProcessState.ExitCode(); got != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", got, c.code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), c.stdout) || !strings.Contains(errb.String(), c.stderr) {
				t.Errorf("stdout %q (want %q)\nstderr %q (want %q)", out.String(), c.stdout, errb.String(), c.stderr)
			}
		})
	}
}
