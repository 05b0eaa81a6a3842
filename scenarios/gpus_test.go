package scenarios

import (
	"strings"
	"testing"
)

// TestGPUsAll: a pool's gpus is a count or all; all is for the local
// backend (it counts this host's GPUs), and a bad value is an error at its
// position that says both forms.
func TestGPUsAll(t *testing.T) {
	body := "tests:\n  - {name: ar, tool: nccl, from: g, args: {collective: all_reduce}}\n"
	for _, c := range []struct{ backend, gpus, want string }{
		{"local", "all", ""},
		{"local", "3", ""},
		{"kube\ncluster: {image: x:1}", "all", "t.yaml:7:21: pools[0].gpus: all counts the GPUs of the host rdmabench runs on: backend local only, not kube (write the count of GPUs per endpoint"},
		{"local", "lots", `t.yaml:6:21: pools[0].gpus: "lots" is neither a count nor all (write the GPUs per endpoint as a count of 0 or more, or all`},
		{"local", "-1", `pools[0].gpus: "-1" is neither a count nor all`},
	} {
		text := "apiVersion: rdmabench.io/v1alpha1\nkind: Scenario\nmetadata: {name: g}\nbackend: " + c.backend +
			"\npools:\n  - {name: g, gpus: " + c.gpus + "}\n" + body
		s, err := LoadBytes("t.yaml", []byte(text))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("gpus: %s on %s: %v", c.gpus, c.backend, err)
		case c.want == "" && (s.Pools[0].GPUs.All != (c.gpus == "all")):
			t.Errorf("gpus: %s read as %+v", c.gpus, s.Pools[0].GPUs)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("gpus: %s on %s:\n got %v\nwant %s", c.gpus, c.backend, err, c.want)
		}
	}
}
