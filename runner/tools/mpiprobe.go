package tools

import (
	"strings"

	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// MPIProbeID names the MPI launch probe in the report.
const MPIProbeID = "mpi-launch"

// MPIProbe checks what an ssh launch of Open MPI needs in the image, on
// every rank: mpirun and ssh (the launcher), Open MPI's daemon beside the
// mpirun that --prefix will name (orted; prted in Open MPI 5) and sshd (the
// other ranks). A missing one fails the launch after the pods are up, with
// an error far from its cause ("orted: command not found" from the
// remote shell); here it is named, with where to get it.
func MPIProbe() Probe {
	return Probe{ID: MPIProbeID, Script: mpiProbeScript, Judge: judgeMPIProbe}
}

const mpiProbeScript = `for b in mpirun ssh; do p=$(command -v "$b" 2>/dev/null) && echo "$b=$p" || echo "$b=missing"; done
s=$(command -v sshd 2>/dev/null) || s=/usr/sbin/sshd; [ -x "$s" ] && echo "sshd=$s" || echo "sshd=missing"
o=; if m=$(command -v mpirun 2>/dev/null); then r=$(readlink -f "$m" 2>/dev/null) || r=$m; for d in orted prted; do [ -x "${r%/*}/$d" ] && { o="${r%/*}/$d"; break; }; done; fi
echo "orted=${o:-missing}"`

// mpiProbeFix says where each program of the launch comes from.
var mpiProbeFix = map[string]string{
	"mpirun": "an image with Open MPI (HPC-X /opt/hpcx/ompi, NGC /usr/local/mpi; Debian/Ubuntu: openmpi-bin)",
	"orted":  "Open MPI's orted (prted in Open MPI 5) in the bin/ folder of the mpirun on PATH: the remote ranks start it by that path (--prefix)",
	"ssh":    "ssh, the launcher's agent (Debian/Ubuntu: openssh-client)",
	"sshd":   "sshd on every rank but the launcher (Debian/Ubuntu: openssh-server)",
}

func judgeMPIProbe(out string) (ProbeStatus, string, string) {
	var found, missing, fixes []string
	for _, b := range []string{"mpirun", "orted", "ssh", "sshd"} {
		switch v := probeField(out, b); v {
		case "":
			return ProbeUnknown, "the probe printed nothing it knows: " + strings.TrimSpace(out), ""
		case "missing":
			missing = append(missing, b)
			fixes = append(fixes, mpiProbeFix[b])
		default:
			found = append(found, v)
		}
	}
	if len(missing) > 0 {
		return ProbeFail, "not in the image: " + strings.Join(missing, ", "), "install " + strings.Join(fixes, "; ")
	}
	return ProbePass, strings.Join(found, " "), ""
}

// LaunchProbes are the probes a job's launch needs beyond its tool's: the
// MPI probe for a tool launched by mpirun over ssh (ranks on several
// hosts).
func LaunchProbes(tool, backendName string, eps []endpoint.Endpoint) []Probe {
	spec, ok := Lookup(tool)
	if !ok || !spec.MPI || len(eps) < 2 || OneHost(backendName, eps) {
		return nil
	}
	return []Probe{MPIProbe()}
}
