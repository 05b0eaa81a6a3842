package scenarios

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// shipped holds the scenarios that come with rdmabench, so that
// `rdmabench init NAME` works from the binary alone.
//
//go:embed *.yaml
var shipped embed.FS

// Shipped is one scenario embedded in the binary.
type Shipped struct {
	Name        string // file name without .yaml, e.g. "pd-disagg"
	Description string // metadata.description, for `rdmabench init`
	Data        []byte
}

// ShippedScenarios lists the embedded scenarios, sorted by name.
func ShippedScenarios() []Shipped {
	entries, _ := fs.ReadDir(shipped, ".")
	out := make([]Shipped, 0, len(entries))
	for _, e := range entries {
		data, err := shipped.ReadFile(e.Name())
		if err != nil {
			continue
		}
		sc := Shipped{Name: strings.TrimSuffix(e.Name(), path.Ext(e.Name())), Data: data}
		if s, err := Decode(e.Name(), data); err == nil {
			sc.Description = s.Metadata.Description
		}
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ShippedScenario finds an embedded scenario by name ("pd-disagg" or
// "pd-disagg.yaml").
func ShippedScenario(name string) (Shipped, bool) {
	name = strings.TrimSuffix(name, ".yaml")
	for _, s := range ShippedScenarios() {
		if s.Name == name {
			return s, true
		}
	}
	return Shipped{}, false
}

// ShippedNames lists the embedded scenario names, for hints.
func ShippedNames() []string {
	var names []string
	for _, s := range ShippedScenarios() {
		names = append(names, s.Name)
	}
	return names
}
