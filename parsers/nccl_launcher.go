package parsers

import "strings"

// ncclLauncherMarks open the messages an MPI launcher prints when it
// refuses or fails to start the ranks (Open MPI 4 ORTE, Open MPI 5 PRRTE):
// then no nccl-tests output follows, and the refusal is the reason.
var ncclLauncherMarks = []string{
	"There are not enough slots available",
	"more processes than the ppr",
	"ORTE was unable",
	"ORTE has lost communication",
	"ORTE does not know how to route",
	"mpirun was unable to launch",
	"mpirun was unable to find the specified executable",
	"mpirun was unable to start the specified application",
	"mpirun has detected an attempt to run as root",
	"PRTE was unable",
	"PRTE has lost communication",
	"prterun was unable",
	"prte was unable",
	"An ORTE daemon has unexpectedly failed",
	"A PRTE daemon has unexpectedly failed",
}

// ncclLauncherLines bounds the refusal text kept as the reason.
const ncclLauncherLines = 3

// launcherLine keeps the first lines of a launcher's refusal: the line
// that names it and what follows, up to the end of its paragraph or box.
func (p *ncclParser) launcherLine(line string) {
	t := strings.TrimSpace(line)
	if p.inLaunch {
		if t == "" || strings.HasPrefix(t, "---") || len(p.launcher) >= ncclLauncherLines {
			p.inLaunch = false
			return
		}
		p.launcher = append(p.launcher, t)
		return
	}
	if len(p.launcher) > 0 {
		return
	}
	for _, m := range ncclLauncherMarks {
		if strings.Contains(t, m) {
			p.launcher, p.inLaunch = append(p.launcher, t), true
			return
		}
	}
}
