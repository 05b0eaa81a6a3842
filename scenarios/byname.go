package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ShippedSuffix marks the name of a scenario read from the binary rather
// than from a file ("pd-disagg.yaml (shipped)"), in messages and in the
// run's metadata.
const ShippedSuffix = " (shipped)"

// LoadByName is Load for what a user types after `rdmabench run`: a path,
// or the name of a shipped scenario ("pd-disagg", "pd-disagg.yaml"). A name
// is looked for as scenarios/NAME.yaml in the working folder first (a clone,
// or a copy written by `rdmabench init` and edited), then among the
// scenarios embedded in the binary. When nothing is found the error says
// every place it looked and the nearest shipped name.
func LoadByName(arg string) (*Scenario, error) {
	if _, err := os.Stat(arg); err == nil || strings.ContainsRune(arg, os.PathSeparator) || strings.ContainsRune(arg, '/') {
		return Load(arg)
	}
	name := strings.TrimSuffix(strings.TrimSuffix(arg, ".yaml"), ".yml")
	local := filepath.Join("scenarios", name+".yaml")
	if _, err := os.Stat(local); err == nil {
		return Load(local)
	}
	if s, ok := ShippedScenario(name); ok {
		return LoadBytes(s.Name+".yaml"+ShippedSuffix, s.Data)
	}
	c := &collector{file: arg}
	hint := "give a scenario file's path, or a shipped scenario's name: " + strings.Join(ShippedNames(), ", ")
	if n := Nearest(name, ShippedNames()); n != "" {
		hint = fmt.Sprintf("did you mean %q? ", n) + hint
	}
	c.add(Pos{}, "", hint, "no such scenario: looked for %q, %q and the shipped scenarios", arg, local)
	return nil, c.err()
}

// ShippedData returns the YAML of a scenario LoadByName read from the
// binary, given its File ("pd-disagg.yaml (shipped)").
func ShippedData(file string) ([]byte, bool) {
	name, ok := strings.CutSuffix(file, ShippedSuffix)
	if !ok {
		return nil, false
	}
	s, ok := ShippedScenario(name)
	return s.Data, ok
}
