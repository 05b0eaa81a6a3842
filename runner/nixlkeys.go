package runner

import (
	"context"
	"time"

	runetcd "github.com/rdmabench/rdmabench/runner/etcd"
	"github.com/rdmabench/rdmabench/runner/tools"
)

// etcdGroupsOf is the nixlbench group of a leg, with the run id filled
// in; none when no etcd runs or the leg has no group.
func (r *run) etcdGroupsOf(l *legRun) []string {
	if r.etcd == nil || l.leg.NixlGroup == "" {
		return nil
	}
	return []string{l.subst.text(l.leg.NixlGroup)}
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
		_, _ = runetcd.DeletePrefix(ctx, r.etcd, tools.EtcdPrefix(g))
	}
}
