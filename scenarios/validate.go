package scenarios

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// Validate checks a decoded (and defaulted) scenario and returns every
// problem at once as an ErrorList, each at the position of the field it is
// about. It never stops at the first problem: fixing a file should take one
// round trip, not one per mistake.
func Validate(s *Scenario) error {
	v := &validator{c: &collector{file: s.File}, s: s, pos: s.Positions}
	v.metadata()
	v.backend()
	v.lineRate()
	v.defaults()
	v.pools()
	v.tests()
	v.serving()
	return v.c.err()
}

// validator carries the scenario being checked and the problems found.
type validator struct {
	c   *collector
	s   *Scenario
	pos *Positions
}

// errf reports a problem with the value at path.
func (v *validator) errf(path, hint, format string, args ...any) {
	v.c.add(v.pos.Value(path), path, hint, format, args...)
}

// keyErrf reports a problem with the key at path (a key that should not be there).
func (v *validator) keyErrf(path, hint, format string, args ...any) {
	v.c.add(v.pos.Key(path), path, hint, format, args...)
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	testName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// checkLabel checks a name that becomes part of pod and object names.
func (v *validator) checkLabel(path, name, what string) bool {
	switch {
	case name == "":
		v.errf(path, "give the "+what+" a short name such as "+exampleName(what), "%s name is missing", what)
	case len(name) > 40 || !dnsLabel.MatchString(name):
		v.errf(path, "use lowercase letters, digits and '-', at most 40 characters (it becomes part of pod names)",
			"%q is not a valid %s name", name, what)
	default:
		return true
	}
	return false
}

func exampleName(what string) string {
	switch what {
	case "pool":
		return "prefill"
	case "test":
		return "write-bw"
	}
	return "pd-disagg"
}

func (v *validator) metadata() {
	v.checkLabel("metadata.name", v.s.Metadata.Name, "scenario")
}

func (v *validator) lineRate() {
	r := &v.s.LineRate
	if r.IsSet() {
		v.checkRate("lineRate", r, true)
	}
}

func (v *validator) defaults() {
	d := &v.s.Defaults
	if d.Timeout.IsSet() {
		v.checkDuration("defaults.timeout", &d.Timeout)
	}
	if v.written("defaults.repetitions", d, "repetitions") && d.Repetitions != nil {
		v.checkMin("defaults.repetitions", *d.Repetitions, 1, "repeat each test at least once")
	}
	if d.GIDIndex != nil && (*d.GIDIndex < 0 || *d.GIDIndex > 255) {
		v.errf("defaults.gidIndex", "leave it out to pick the RoCE v2 IPv4 GID automatically", "GID index %d is out of range 0–255", *d.GIDIndex)
	}
	if v.written("defaults.device", d, "device") && strings.TrimSpace(d.Device) == "" {
		v.errf("defaults.device", "name an RDMA device such as mlx5_0, or auto", "device is empty")
	}
	v.checkEnv("defaults.env", d.Env)
}

// checkEnv checks environment variable names.
func (v *validator) checkEnv(path string, env map[string]string) {
	for k := range env {
		if k == "" || strings.ContainsAny(k, "= \t") {
			v.keyErrf(joinPath(path, k), "environment variable names are like NCCL_DEBUG or UCX_TLS", "%q is not an environment variable name", k)
		}
	}
}

// checkMin reports an integer below min.
func (v *validator) checkMin(path string, got, min int, hint string) {
	if got < min {
		v.errf(path, hint, "must be at least %d, not %d", min, got)
	}
}

// checkOneOf reports a value that is not one of the known ones.
func (v *validator) checkOneOf(path, got, what string, known []string) bool {
	if contains(known, got) {
		return true
	}
	if got == "" {
		v.errf(path, what+" are: "+strings.Join(known, ", "), "is empty")
		return false
	}
	v.errf(path, suggest(got, what, known), "unknown %s %q", strings.TrimSuffix(what, "s"), got)
	return false
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// undecoded reports a section that was written but could not be decoded
// (a mapping where a list belongs): references into it are not checked,
// since the decode error already says what is wrong.
func (v *validator) undecoded(path string) bool {
	switch path {
	case "pools":
		return v.pos.Has(path) && len(v.s.Pools) == 0
	case "hosts":
		return v.pos.Has(path) && len(v.s.Hosts) == 0
	}
	return false
}

// written reports whether the user wrote the field key of owner (a struct
// pointer) at path. A scenario built in code has no positions: there, a
// field counts as written when it is not zero.
func (v *validator) written(path string, owner any, key string) bool {
	if v.pos != nil {
		return v.pos.Has(path)
	}
	o := reflect.ValueOf(owner).Elem()
	i, ok := yamlFields(o.Type())[key]
	return ok && !o.Field(i).IsZero()
}
