package benchreport

import (
	_ "embed" // the partial's JSON Schema
	"encoding/json"
	"io"
)

// JSONSchema is the partial's JSON Schema: Benchmark Report v0.2's rules for
// the parts written here, and rdma_fabric's own.
//
//go:embed br_v0_2_partial.schema.json
var JSONSchema []byte

// Write writes the report as indented JSON, which yq reads as YAML too.
func Write(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
