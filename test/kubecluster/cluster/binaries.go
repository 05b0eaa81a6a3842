package cluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Commands are the control-plane binaries the lane builds from the
// k8s.io/kubernetes module in test/kubecluster/k8s.
var Commands = []string{"kube-apiserver", "kube-scheduler", "kube-controller-manager"}

// BuildTimeout bounds EnsureBinaries (a cold build is about 4 minutes on
// two cores with an empty module cache).
const BuildTimeout = 20 * time.Minute

// RepoRoot finds the repository root: the nearest parent of the working
// directory that holds test/kubecluster/k8s/go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "test", "kubecluster", "k8s", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("test/kubecluster/k8s/go.mod not found above the working directory")
		}
		dir = parent
	}
}

// DefaultBinDir is where the binaries are cached: $RDMABENCH_KUBE_BIN, or
// .work/bin under the repository root.
func DefaultBinDir() (string, error) {
	if d := os.Getenv("RDMABENCH_KUBE_BIN"); d != "" {
		return d, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, ".work", "bin"), nil
}

// EnsureBinaries builds the control-plane binaries into binDir when one is
// missing or older than the k8s module's go.mod/go.sum; otherwise it does
// nothing. Build output goes to log (may be nil).
func EnsureBinaries(ctx context.Context, binDir string, log io.Writer) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	mod := filepath.Join(root, "test", "kubecluster", "k8s")
	var newest time.Time
	for _, f := range []string{"go.mod", "go.sum"} {
		st, err := os.Stat(filepath.Join(mod, f))
		if err != nil {
			return err
		}
		if st.ModTime().After(newest) {
			newest = st.ModTime()
		}
	}
	var pkgs []string
	for _, c := range Commands {
		st, err := os.Stat(filepath.Join(binDir, c))
		if err != nil || st.ModTime().Before(newest) {
			pkgs = append(pkgs, "k8s.io/kubernetes/cmd/"+c)
		}
	}
	if len(pkgs) == 0 {
		return nil
	}
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, BuildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", binDir + "/"}, pkgs...)...)
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	}
	if out, err := runQuiet(cmd, log == nil); err != nil {
		return fmt.Errorf("build %s in %s: %v\n%s", strings.Join(pkgs, " "), mod, err, out)
	}
	return nil
}

func runQuiet(cmd *exec.Cmd, capture bool) (string, error) {
	if capture {
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	return "", cmd.Run()
}
