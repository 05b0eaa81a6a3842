package report

import (
	"encoding/json"
	"strings"
	"testing"
)

// Save writes what Load reads back: a 2.6 MB reason full of markup and
// U+2028, a NUL in the run error.
func TestSaveLoadRoundTripMarkupAndControl(t *testing.T) {
	r := matrixReport(4, sweep(64<<10, 256<<10))
	long := strings.Repeat("x</script>&<>\"'\u2028", 200000)
	r.Results[0].Reason = long
	r.Run.Error = "\x00nul"
	path := t.TempDir() + "/report.json"
	if err := Save(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Results[0].Reason != long {
		t.Error("long reason changed")
	}
	if got.Run.Error != r.Run.Error {
		t.Errorf("run error %q, saved %q", got.Run.Error, r.Run.Error)
	}
}

// encodeReport is json.MarshalIndent byte for byte.
func TestEncodeIsMarshalIndent(t *testing.T) {
	for _, r := range []*Report{matrixReport(5, sweep(64<<10, 256<<10)), trustReport(), {SchemaVersion: SchemaVersion}, {SchemaVersion: SchemaVersion, Results: []Result{}}} {
		r.Run.Fingerprint = map[string]string{"results": "x\n  \"results\": null"}
		var got strings.Builder
		if err := encodeReport(&got, r); err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(r, "", "  ")
		if got.String() != string(want)+"\n" {
			t.Errorf("differs (%d vs %d bytes)", got.Len(), len(want)+1)
		}
	}
}
