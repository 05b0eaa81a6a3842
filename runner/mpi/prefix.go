package mpi

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Open MPI starts its daemon (orted; prted in Open MPI 5) on every remote
// host through ssh, with the remote login's PATH, where HPC-X
// (/opt/hpcx/ompi), NGC (/usr/local/mpi) and UBI images do not put it:
// "orted: command not found". mpirun by its absolute path with --prefix (the
// folder above its bin/) makes the remote side run PREFIX/bin/orted with
// PREFIX/lib on LD_LIBRARY_PATH. The launcher reads both on the launcher's
// endpoint before the leg (ResolveScript) and rewrites the command
// (PrefixArgv).

// ResolveScript prints "mpirun=PATH" (the mpirun on PATH) and
// "prefix=DIR" (the folder above the bin/ of what it links to: Debian's
// /usr/bin/mpirun → /etc/alternatives → /usr/bin/orterun gives /usr), or
// "mpirun=missing".
const ResolveScript = `m=$(command -v mpirun 2>/dev/null) || m=
case "$m" in /*) ;; *) echo "mpirun=missing"; exit 0;; esac
r=$(readlink -f "$m" 2>/dev/null) || r=$m
[ -n "$r" ] || r=$m
d=${r%/*}; p=${d%/*}
echo "mpirun=$m"; echo "prefix=${p:-/}"`

// ParseResolve reads ResolveScript's output: mpirun's absolute path and
// its prefix; an error when mpirun is not there.
func ParseResolve(out string) (path, prefix string, err error) {
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch k {
		case "mpirun":
			path = v
		case "prefix":
			prefix = v
		}
	}
	if path == "" || path == "missing" || !strings.HasPrefix(path, "/") || prefix == "" {
		return "", "", fmt.Errorf("mpirun is not on the launcher's PATH (%s)", strings.TrimSpace(out))
	}
	return path, prefix, nil
}

// Resolve runs ResolveScript on the launcher's endpoint, bounded.
func Resolve(ctx context.Context, b backend.Backend, ep endpoint.Endpoint) (path, prefix string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	out, err := b.Exec(ctx, ep, []string{"sh", "-c", ResolveScript})
	if err != nil {
		return "", "", fmt.Errorf("find mpirun on %s: %w", ep.Name, err)
	}
	return ParseResolve(string(out))
}

// PrefixArgv is an mpirun argv with mpirun by its absolute path and
// --prefix; argv whose first word is not mpirun, or one that names its
// own --prefix, is returned unchanged.
func PrefixArgv(argv []string, path, prefix string) []string {
	if len(argv) == 0 || argv[0] != "mpirun" || path == "" {
		return argv
	}
	for _, w := range argv {
		if w == "--prefix" || strings.HasPrefix(w, "--prefix=") {
			return append([]string{path}, argv[1:]...)
		}
	}
	return append([]string{path, "--prefix", prefix}, argv[1:]...)
}
