package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
	"github.com/rdmabench/rdmabench/runner/endpoint"
	"github.com/rdmabench/rdmabench/runner/judge"
	"github.com/rdmabench/rdmabench/runner/plan"
)

// sharedPorts are the groups of endpoints of one machine that send on one
// NIC port (endpoint.NICPort): pods of a perNode pool given VFs of one PF,
// or one shared device. Tests of theirs that run in one round split the
// port's line rate, which no figure of theirs says by itself.
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

// sharedPortNotes says, for each job of a round, which of its endpoints
// send on a port that another job of the same round uses through another
// endpoint: its figure is one share of that port's line rate. Skipped
// jobs and rail legs (other devices) put nothing on the port.
func sharedPortNotes(groups []schema.SharedPort, jobs []plan.Job, skipped func(*plan.Job) bool) map[string]string {
	if len(groups) == 0 || len(jobs) < 2 {
		return nil
	}
	portOf := map[string]int{}
	for i, g := range groups {
		for _, name := range g.Endpoints {
			portOf[name] = i
		}
	}
	uses := make([][]string, len(jobs)) // each job's endpoints on a shared port
	for j := range jobs {
		if skipped(&jobs[j]) {
			continue
		}
		for _, leg := range jobs[j].Legs {
			if leg.OnRails() {
				continue
			}
			for _, name := range append([]string{leg.From, leg.To}, leg.Ranks...) {
				if _, shared := portOf[name]; shared && !slices.Contains(uses[j], name) {
					uses[j] = append(uses[j], name)
				}
			}
		}
	}
	notes := map[string]string{}
	for j := range jobs {
		var parts []string
		for _, mine := range uses[j] {
			var others []string
			for k := range jobs {
				for _, theirs := range uses[k] {
					if k != j && theirs != mine && portOf[theirs] == portOf[mine] && !slices.Contains(uses[j], theirs) && !slices.Contains(others, theirs) {
						others = append(others, theirs)
					}
				}
			}
			if len(others) > 0 {
				g := groups[portOf[mine]]
				parts = append(parts, fmt.Sprintf("%s sent on the NIC port %s of %s that %s used in the same round",
					mine, g.Port, g.Machine, strings.Join(others, ", ")))
			}
		}
		if len(parts) > 0 {
			notes[jobs[j].ID] = strings.Join(parts, "; ") + ": the figure is a share of that port's line rate"
		}
	}
	return notes
}

// noteSharedPort adds to a result what sharedPortNotes said of its job.
func (r *run) noteSharedPort(res *schema.Result) {
	r.mu.Lock()
	note := r.portNotes[res.JobID]
	r.mu.Unlock()
	if note != "" {
		res.SharedPort = note
		res.Reason = judge.JoinReason(res.Reason, note)
	}
}
