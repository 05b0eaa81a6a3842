package nccl

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Library is where the NCCL library was found, and how.
type Library struct {
	// Path is what was loaded: a file, or the soname the loader resolved.
	Path string
	// FoundBy says which rule found it: VLLM_NCCL_SO_PATH, torch (the
	// nvidia-nccl wheel beside torch, the one torch loads), or loader.
	FoundBy string
	// Looked lists where the search looked, for the error when nothing is
	// found and for preflight.
	Looked []string
}

// ncclSoname is what vLLM asks the loader for on CUDA (find_nccl_library).
const ncclSoname = "libnccl.so.2"

// FindNCCL finds the NCCL library the way vLLM does
// (vllm/utils find_nccl_library): VLLM_NCCL_SO_PATH when set; else the one
// torch loads, which vLLM gets by asking the loader for libnccl.so.2 after
// torch has loaded its own (here: the nvidia/nccl/lib of the Python
// packages, found through the image's python3 and the usual
// site-packages folders); else the loader's libnccl.so.2.
func FindNCCL(ctx context.Context, getenv func(string) string) Library {
	if p := strings.TrimSpace(getenv("VLLM_NCCL_SO_PATH")); p != "" {
		return Library{Path: p, FoundBy: "VLLM_NCCL_SO_PATH", Looked: []string{"VLLM_NCCL_SO_PATH=" + p}}
	}
	lib := Library{}
	for _, dir := range sitePackages(ctx, getenv) {
		p := filepath.Join(dir, "nvidia", "nccl", "lib", ncclSoname)
		lib.Looked = append(lib.Looked, p)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			lib.Path, lib.FoundBy = p, "torch"
			return lib
		}
	}
	lib.Looked = append(lib.Looked, "the dynamic loader's "+ncclSoname+" (LD_LIBRARY_PATH, ld.so.cache)")
	lib.Path, lib.FoundBy = ncclSoname, "loader"
	return lib
}

// sitePackages lists the image's Python package folders: what its python3
// says (bounded: a broken python must not hang the probe), then the
// usual places of pip, conda and virtual environments.
func sitePackages(ctx context.Context, getenv func(string) string) []string {
	var dirs []string
	add := func(ds ...string) {
		for _, d := range ds {
			if d != "" && !contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	if py, err := exec.LookPath("python3"); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, py, "-c", "import sys; print('\\n'.join(p for p in sys.path if p))").Output()
		if err == nil {
			add(strings.Fields(string(out))...)
		}
	}
	globs := []string{"/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
		"/usr/lib/python3*/dist-packages", "/usr/lib/python3*/site-packages", "/usr/lib64/python3*/site-packages",
		"/opt/*/lib/python3*/site-packages", "/opt/conda/lib/python3*/site-packages"}
	if v := getenv("VIRTUAL_ENV"); v != "" {
		globs = append([]string{filepath.Join(v, "lib", "python3*", "site-packages")}, globs...)
	}
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		add(m...)
	}
	return dirs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func getenv(k string) string { return os.Getenv(k) }
