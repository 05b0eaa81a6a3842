package runner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/schema"
)

// The first endpoint's library versions join the fingerprint without
// overriding what discovery said; endpoints that disagree are named.
func TestLibraryVersionsInFingerprint(t *testing.T) {
	var out bytes.Buffer
	r := &run{progress: newProgress(&out, 1), cfg: Config{Fingerprint: map[string]string{schema.FingerprintKernel: "6.12"}}}
	rep := &schema.Report{Preflight: []schema.PreflightEndpoint{
		{Endpoint: "prefill-0", Versions: map[string]string{"ucx.version": "1.19.0", "ucx.version (nixl)": "1.22.0"}},
		{Endpoint: "decode-0", Versions: map[string]string{"ucx.version": "1.19.0", "ucx.version (nixl)": "1.22.0"}},
		{Endpoint: "decode-1", Versions: map[string]string{"ucx.version": "1.19.0", "ucx.version (nixl)": "1.18.1"}},
	}}
	r.noteLibraryVersions(rep)
	fp := rep.Run.Fingerprint
	if fp["kernel"] != "6.12" || fp["ucx.version"] != "1.19.0" || fp["ucx.version (nixl)"] != "1.22.0" || len(fp) != 3 {
		t.Errorf("fingerprint %v", fp)
	}
	want := "preflight WARN ucx.version (nixl) differs between endpoints: 1.18.1 on decode-1; 1.22.0 on prefill-0, decode-0"
	if got := out.String(); !strings.Contains(got, want) || strings.Count(got, "differs") != 1 {
		t.Errorf("progress:\n%s\nwant %q", got, want)
	}
}
