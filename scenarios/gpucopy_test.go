package scenarios

import (
	"strings"
	"testing"
)

// TestGPUCopyNeedsGPUsOnOneHost: gpu_copy reads one GPU from another of
// the same host. A pool without GPUs has none to name (on the local
// backend it sees every GPU, so --device 0 and --peer-device 1 were two
// other pools' GPUs), and on kube each pod sees its own GPUs alone.
func TestGPUCopyNeedsGPUsOnOneHost(t *testing.T) {
	const pools = "apiVersion: rdmabench.io/v1alpha1\nkind: Scenario\nmetadata: {name: m}\n%s\npools:\n  - {name: a, gpus: 1}\n  - {name: b}\ntests:\n"
	for _, c := range []struct{ backend, test, want string }{
		{"backend: local", "{name: t, tool: gpu_copy, from: a, to: b}", "t.yaml:9:44: tests[0].to: pool \"b\" has no GPUs, and gpu_copy copies between two GPUs (give pools \"b\" gpus: 1 or more)"},
		{"backend: local", "{name: t, tool: gpu_copy, from: b, to: a}", "t.yaml:9:37: tests[0].from: pool \"b\" has no GPUs, and gpu_copy copies between two GPUs (give pools \"b\" gpus: 1 or more)"},
		{"backend: local", "{name: t, tool: gpu_copy, from: a, to: a}", "t.yaml:9:5: tests[0].pattern: pairwise within pool \"a\" needs at least 2 endpoints, and it has 1 replica (pairwise is the default pattern) (raise pools \"a\" replicas to 2 or more, or test between two pools with to:)"},
		{"backend: kube", "{name: t, tool: gpu_copy, from: a, to: a}", "t.yaml:9:21: tests[0].tool: gpu_copy copies between two GPUs of one process's host; a kube pod sees its own GPUs alone (use the local backend on the GPU host, or nccl_probe sendrecv between the pods)"},
	} {
		text := strings.Replace(pools, "%s", c.backend, 1) + "  - " + c.test + "\n"
		_, err := LoadBytes("t.yaml", []byte(text))
		if got := errText(err); !strings.Contains(got, c.want) {
			t.Errorf("%s %s:\n got %q\nwant %q", c.backend, c.test, got, c.want)
		}
	}
}
