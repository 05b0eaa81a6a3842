package runner

import (
	"context"
	"strings"
	"time"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
)

// etcdGroupsOf returns the nixlbench --benchmark_group values of a leg
// (gflags spellings: --x=v, --x v, -x v, dashes for underscores).
func (r *run) etcdGroupsOf(l *legRun) []string {
	if r.etcd == nil {
		return nil
	}
	seen := map[string]bool{}
	var groups []string
	for _, pc := range l.leg.Commands {
		argv, _, err := l.subst.command(pc)
		if err != nil {
			continue
		}
		for _, g := range flagValues(argv, "benchmark_group") {
			if g != "" && !seen[g] {
				seen[g] = true
				groups = append(groups, g)
			}
		}
	}
	return groups
}

// flagValues finds a gflags flag's values in argv.
func flagValues(argv []string, name string) []string {
	var out []string
	for i := 0; i < len(argv); i++ {
		a := strings.TrimLeft(argv[i], "-")
		if a == argv[i] {
			continue
		}
		k, v, hasV := strings.Cut(a, "=")
		if strings.ReplaceAll(k, "-", "_") != name {
			continue
		}
		if !hasV && i+1 < len(argv) {
			i++
			v = argv[i]
		}
		out = append(out, v)
	}
	return out
}

// clearEtcd deletes every key of the groups (xferbench/<group>/, which
// holds the double-slash keys too), so a killed leg's stale //size never
// shifts the next leg's ranks.
func (r *run) clearEtcd(groups []string) {
	if r.etcd == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, g := range groups {
		_, _ = runetcd.DeletePrefix(ctx, r.etcd, EtcdPrefix(g))
	}
}

// EtcdPrefix is the prefix of every key nixlbench writes for a group.
func EtcdPrefix(group string) string { return "xferbench/" + group + "/" }
