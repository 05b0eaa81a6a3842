package html

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rdmabench/rdmabench/report/schema"
)

// conclusion is the page's first line, one a reviewer can act on: the
// counts, why the tests that did not run were skipped, and whether any
// figure is of the fabric ("4 passed, 3 skipped: no RDMA device under
// /sys/class/infiniband; nothing measured the fabric …").
func conclusion(r *schema.Report) string {
	c := schema.CountVerdicts(r.Results)
	var parts []string
	add := func(n int, what string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, what))
		}
	}
	add(c.Fail, "failed")
	add(c.Invalid, "invalid")
	add(c.Error, plural(c.Error, "error", "errors"))
	add(c.Pass, "passed")
	add(c.Skipped, "skipped")
	line := strings.Join(parts, ", ")
	if why := commonSkipReason(r.Results); why != "" {
		line += ": " + why
	}
	if line == "" {
		line = "no results"
	}
	return line + "; " + fabricPhrase(r.Results)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// commonSkipReason is the reason most skipped tests share, briefly (a
// preflight check's evidence, without the endpoint and the fix), and how
// many other reasons there are.
func commonSkipReason(rs []schema.Result) string {
	count := map[string]int{}
	for i := range rs {
		if rs[i].Verdict == schema.VerdictSkipped {
			count[briefReason(rs[i].Reason)]++
		}
	}
	if len(count) == 0 {
		return ""
	}
	whys := make([]string, 0, len(count))
	for w := range count {
		whys = append(whys, w)
	}
	sort.Slice(whys, func(i, j int) bool {
		if count[whys[i]] != count[whys[j]] {
			return count[whys[i]] > count[whys[j]]
		}
		return whys[i] < whys[j]
	})
	if len(whys) > 1 {
		return fmt.Sprintf("%s (and %d other reason(s))", whys[0], len(whys)-1)
	}
	return whys[0]
}

// briefReason is a skip reason's gist: "preflight rdma-device: no RDMA
// device under … on a-0 (fix: …)" is "no RDMA device under …".
func briefReason(reason string) string {
	s := reason
	if rest, ok := strings.CutPrefix(s, "preflight "); ok {
		if _, ev, found := strings.Cut(rest, ": "); found {
			s = ev
		}
		s, _, _ = strings.Cut(s, " (fix: ")
		if i := strings.LastIndex(s, " on "); i > 0 {
			s = s[:i]
		}
	}
	s, _, _ = strings.Cut(s, "; ")
	return strings.TrimSpace(s)
}

// fabricPhrase says whether the figures are of the fabric: a result whose
// sides ran on one machine (or met in shared memory) is not.
func fabricPhrase(rs []schema.Result) string {
	measured, local := 0, 0
	for i := range rs {
		if rs[i].BestBps <= 0 && len(rs[i].Samples) == 0 {
			continue
		}
		measured++
		if rs[i].SameMachine != "" || strings.Contains(rs[i].Reason, "not a fabric figure") {
			local++
		}
	}
	switch {
	case measured == 0:
		return "nothing was measured"
	case local == measured:
		return "nothing measured the fabric (every figure is of one machine)"
	case local > 0:
		return fmt.Sprintf("%d of %d measured results are not fabric figures (one machine)", local, measured)
	}
	return "no measured result is flagged as of one machine"
}

// lineRateNote says why "% of line rate" is "-" in every row, where it is.
func lineRateNote(r *schema.Report) string {
	measured := false
	for i := range r.Results {
		if r.Results[i].Efficiency != nil {
			return ""
		}
		measured = measured || r.Results[i].BestBps > 0
	}
	if !measured {
		return ""
	}
	why := "no line rate is known"
	if lr := r.Run.LineRate; lr != nil {
		why += " (" + strings.TrimSuffix(lr.Source+": "+lr.Detail, ": ") + ")"
	}
	return "% of line rate is - in every row: " + why + "; set lineRate: in the scenario to judge against one."
}
