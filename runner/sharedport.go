package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// sharedPorts are the groups of endpoints of one machine that send on one
// NIC port (endpoint.NICPort): pods of a perNode pool given VFs of one PF,
// or one shared device. Legs of theirs that run at the same time split
// the port's line rate, which no figure of theirs says by itself.
func sharedPorts(eps []endpoint.Endpoint) []schema.SharedPort {
	groups := map[[2]string][]string{}
	for _, ep := range eps {
		machine := ep.Node
		if machine == "" {
			machine = ep.Host
		}
		if machine == "" || ep.NICPort == "" {
			continue // the local backend: one host, shared on purpose
		}
		k := [2]string{machine, ep.NICPort}
		groups[k] = append(groups[k], ep.Name)
	}
	var out []schema.SharedPort
	for k, names := range groups {
		if len(names) > 1 {
			out = append(out, schema.SharedPort{Machine: k[0], Port: k[1], Endpoints: names})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Endpoints[0] < out[j].Endpoints[0] })
	return out
}

// portUse is one leg's time on the shared ports: which of its endpoints
// are on one, from when to when (until zero: still running).
type portUse struct {
	job        string
	endpoints  []string
	start, end time.Time
}

// portUsers are the endpoints of a leg that send on a shared port: its
// sides, not its rail legs' (other devices).
func portUsers(groups []schema.SharedPort, leg *plan.Leg) []string {
	if len(groups) == 0 || leg == nil || leg.OnRails() {
		return nil
	}
	var users []string
	for _, name := range append([]string{leg.From, leg.To}, leg.Ranks...) {
		for _, g := range groups {
			if slices.Contains(g.Endpoints, name) && !slices.Contains(users, name) {
				users = append(users, name)
			}
		}
	}
	return users
}

// portBusy records that a leg of job started using the shared ports
// through users; the returned function records its end.
func (r *run) portBusy(job string, users []string, start time.Time) func(time.Time) {
	if len(users) == 0 {
		return func(time.Time) {}
	}
	r.mu.Lock()
	u := &portUse{job: job, endpoints: users, start: start}
	r.portUses = append(r.portUses, u)
	r.mu.Unlock()
	return func(end time.Time) {
		r.mu.Lock()
		u.end = end
		r.mu.Unlock()
	}
}

// sharedPortNote says which of a leg's endpoints (users, busy from start
// to end) sent on a port that another job's leg used through another
// endpoint at the same time; "" when none did.
func sharedPortNote(groups []schema.SharedPort, uses []*portUse, job string, users []string, start, end time.Time) string {
	var parts []string
	for _, mine := range users {
		var others []string
		var g schema.SharedPort
		for _, grp := range groups {
			if slices.Contains(grp.Endpoints, mine) {
				g = grp
			}
		}
		for _, u := range uses {
			overlaps := u.start.Before(end) && (u.end.IsZero() || u.end.After(start))
			if u.job == job || !overlaps {
				continue
			}
			for _, theirs := range u.endpoints {
				if theirs != mine && slices.Contains(g.Endpoints, theirs) && !slices.Contains(users, theirs) && !slices.Contains(others, theirs) {
					others = append(others, theirs)
				}
			}
		}
		if len(others) > 0 {
			parts = append(parts, fmt.Sprintf("%s sent on the NIC port %s of %s that %s used at the same time",
				mine, g.Port, g.Machine, strings.Join(others, ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": the figure is a share of that port's line rate"
}

// noteSharedPort adds to a leg's result what sharedPortNote says of it.
func (r *run) noteSharedPort(res *schema.Result, users []string, start, end time.Time) {
	if len(users) == 0 {
		return
	}
	r.mu.Lock()
	note := sharedPortNote(r.sharedPorts, r.portUses, res.JobID, users, start, end)
	r.mu.Unlock()
	if note != "" {
		res.SharedPort = note
		res.Reason = judge.JoinReason(res.Reason, note)
	}
}
