package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionCmd: the version, the Go toolchain and platform, and whether
// this binary draws charts, each on its own line.
func TestVersionCmd(t *testing.T) {
	code, out, stderr := runCLI(t, "", "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 || lines[0] != "rdmabench "+buildVersion() {
		t.Fatalf("version output:\n%s", out)
	}
	for _, want := range []string{"go: " + runtime.Version(), "platform: " + runtime.GOOS + "/" + runtime.GOARCH, "charts: "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// buildVersion: -ldflags wins; a `go install …@v1.2.3` build (no ldflags)
// reports the module version the Go command recorded; else dev.
func TestBuildVersion(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v9.9.9"
	if got := buildVersion(); got != "v9.9.9" {
		t.Errorf("ldflags version: %q", got)
	}
	version = "dev"
	for _, c := range []struct{ mod, want string }{{"v0.3.0", "v0.3.0"}, {"(devel)", "dev"}, {"", "dev"}} {
		info := &debug.BuildInfo{Main: debug.Module{Version: c.mod}}
		if got := versionFrom(info); got != c.want {
			t.Errorf("module version %q: %q, want %q", c.mod, got, c.want)
		}
	}
}
