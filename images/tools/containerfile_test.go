package tools

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// containerfilePackages is the apt-get install list of the Containerfile:
// the words ending in " \" between "--no-install-recommends" and "# end of
// packages".
func containerfilePackages(t *testing.T) []string {
	b, err := os.ReadFile("Containerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "--no-install-recommends")
	j := strings.Index(s, "# end of packages")
	if i < 0 || j < i {
		t.Fatal("Containerfile: no apt-get install --no-install-recommends … # end of packages")
	}
	var out []string
	for _, line := range strings.Split(s[i:j], "\n")[1:] {
		w := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), `\`))
		if w == "" || strings.HasPrefix(w, "&&") {
			break
		}
		out = append(out, strings.Fields(w)...)
	}
	return out
}

// The Containerfile installs exactly packages.txt, in its order: two
// builds of the tools image, one image.
func TestContainerfileMatchesPackages(t *testing.T) {
	got, want := containerfilePackages(t), cpuPackages(t)
	if !slices.Equal(got, want) {
		t.Errorf("Containerfile installs %v;\npackages.txt lists %v", got, want)
	}
	b, _ := os.ReadFile("Containerfile")
	s := string(b)
	for _, want := range []string{"ARG SUITE=bookworm", "debian:${SUITE}-slim", "TARGETARCH", "CGO_ENABLED=0"} {
		if !strings.Contains(s, want) {
			t.Errorf("Containerfile lacks %q", want)
		}
	}
	build, _ := os.ReadFile("build.sh")
	if !strings.Contains(string(build), "SUITE=${SUITE:-bookworm}") {
		t.Error("build.sh's suite is no longer bookworm: change the Containerfile's SUITE with it")
	}
	// Nothing third-party is built: the only compiler run is go build of ./cmd/.
	var code []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			code = append(code, line)
		}
	}
	s = strings.Join(code, "\n")
	for _, bad := range []string{"make ", "cmake", "./configure", "git clone", "gcc", "meson", "ninja"} {
		if strings.Contains(s, bad) {
			t.Errorf("Containerfile runs %q: it must install Debian packages and build only rdmabench", bad)
		}
	}
}
