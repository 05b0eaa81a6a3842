package schema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/report/internal/fixture"
	"github.com/rdmabench/rdmabench/report/schema"
)

// Save writes what Load reads back: a 2.6 MB reason full of markup and
// U+2028, a NUL in the run error.
func TestSaveLoadRoundTripMarkupAndControl(t *testing.T) {
	r := fixture.Matrix(4, fixture.Sweep(64<<10, 256<<10))
	long := strings.Repeat("x</script>&<>\"'\u2028", 200000)
	r.Results[0].Reason = long
	r.Run.Error = "\x00nul"
	path := t.TempDir() + "/report.json"
	if err := schema.Save(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := schema.Load(path)
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
	for _, r := range []*schema.Report{fixture.Matrix(5, fixture.Sweep(64<<10, 256<<10)), fixture.Trust(), {SchemaVersion: schema.Version}, {SchemaVersion: schema.Version, Results: []schema.Result{}}} {
		r.Run.Fingerprint = map[string]string{"results": "x\n  \"results\": null"}
		var got strings.Builder
		if err := schema.EncodeReport(&got, r); err != nil {
			t.Fatal(err)
		}
		want, _ := json.MarshalIndent(r, "", "  ")
		if got.String() != string(want)+"\n" {
			t.Errorf("differs (%d vs %d bytes)", got.Len(), len(want)+1)
		}
	}
}
