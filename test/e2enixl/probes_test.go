package e2enixl

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/runner/preflight"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
)

// TestImageProbesOnTheRealBuild runs preflight's image checks against the
// real NIXL build, as an endpoint's shell would: its UCX and LIBFABRIC
// plugins load, UCCL's is not there (named with what is), its UCX has
// verbs but no CUDA (a VRAM test is doomed with the fix), the ETCD runtime
// is in. Then a plugin's library hidden on purpose: the plugin is named
// unloadable with the missing library.
func TestImageProbesOnTheRealBuild(t *testing.T) {
	needNixl(t)
	test := &scenarios.Test{Tool: "nixlbench", Requires: "rdma", Args: scenarios.Args{Runtime: "ETCD",
		Backends: []string{"UCX", "LIBFABRIC", "UCCL"}, InitiatorSeg: "VRAM", TargetSeg: "VRAM"}}
	probes := tools.ProbesOf(test, "nixlbench")
	got := judge(t, probes, os.Environ())
	want := map[string]string{
		"binary-nixlbench": "pass", "nixlbench-etcd": "pass", "nixl-plugin-UCX": "pass", "nixl-plugin-LIBFABRIC": "pass",
		"nixl-plugin-UCCL": "fail", "ucx-transports-cuda": "fail", "ucx-transports-rdma": "pass",
	}
	for id, status := range want {
		if got[id].Status != status {
			t.Errorf("%s: %s (%s); want %s", id, got[id].Status, got[id].Evidence, status)
		}
	}
	if e := got["nixl-plugin-UCCL"].Evidence; !strings.Contains(e, "no UCCL plugin in") || !strings.Contains(e, "UCX") {
		t.Errorf("UCCL: %q; want the folder and the plugins it has", e)
	}

	// Hide libfabric from the LIBFABRIC plugin: a copy of the plugin folder
	// without the library's folder on its RPATH (the copy's $ORIGIN).
	dir := t.TempDir()
	src := filepath.Join(prefix, "lib", "plugins", "libplugin_LIBFABRIC.so")
	if err := exec.Command("cp", src, dir).Run(); err != nil {
		t.Fatal(err)
	}
	got = judge(t, []tools.Probe{tools.NixlPluginProbe("LIBFABRIC")}, append(os.Environ(), "NIXL_PLUGIN_DIR="+dir))
	if c := got["nixl-plugin-LIBFABRIC"]; c.Status != "fail" || !strings.Contains(c.Evidence, "cannot load") {
		t.Errorf("a plugin whose libraries do not resolve: %s (%s)", c.Status, c.Evidence)
	}
	for id, c := range got {
		t.Logf("%s: %s: %s", id, c.Status, c.Evidence)
	}
}

// judge runs the probes' script in sh with env (the NIXL build first on
// PATH) and evaluates them as preflight does.
func judge(t *testing.T, probes []tools.Probe, env []string) map[string]struct{ Status, Evidence string } {
	t.Helper()
	cmd := exec.Command("sh", "-c", preflight.ProbeScript(probes))
	cmd.Env = append(env, "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("probe script: %v", err)
	}
	checks := preflight.Evaluate(preflight.Facts{Probes: preflight.ParseProbes(string(out))}, preflight.Want{Endpoint: "e", Probes: probes})
	res := map[string]struct{ Status, Evidence string }{}
	for _, c := range checks {
		res[c.ID] = struct{ Status, Evidence string }{c.Status, c.Evidence}
		t.Logf("%s: %s: %s (fix: %s)", c.ID, c.Status, c.Evidence, c.Fix)
	}
	return res
}
