package parsers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNCCLLauncherRefusals: real Open MPI refusals (testdata/gpu/mpirun:
// Ubuntu's 4.1.6 on the two-H200 machine, Debian's 4.1.4 here) are a
// launcher error naming the refusal, not "text is not nccl-tests output".
func TestNCCLLauncherRefusals(t *testing.T) {
	cases := map[string]string{
		"ubuntu-4.1.6-not-enough-slots.txt": "There are not enough slots available in the system to satisfy the 3 slots that were requested by the application:",
		"debian-4.1.4-not-enough-slots.txt": "There are not enough slots available in the system to satisfy the 3 slots that were requested by the application:",
		"debian-4.1.4-ppr.txt":              "Your job has requested more processes than the ppr for this topology can support:",
		"debian-4.1.4-no-executable.txt":    "mpirun was unable to find the specified executable file, and therefore",
	}
	for file, want := range cases {
		data, err := os.ReadFile(filepath.Join(gpuCaptureDir, "mpirun", file))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := ParseNCCL(strings.NewReader(string(data)))
		if err != nil || len(ms) != 1 {
			t.Fatalf("%s: %v %d measurements", file, err, len(ms))
		}
		m := ms[0]
		if m.OK || m.ErrorClass != ClassLauncher || !strings.HasPrefix(m.Error, "mpirun: "+want) {
			t.Errorf("%s: ok=%v class=%s error=%q, want launcher_error %q", file, m.OK, m.ErrorClass, m.Error, want)
		}
	}
}
