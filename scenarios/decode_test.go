package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Decode records where every key and value was written.
func TestDecodePositions(t *testing.T) {
	s := mustDecode(t, minimal+"  - name: t1\n    tool: rping\n    from: a\n    to: b\n")
	if p := s.Positions.Value("tests[0].to"); p != (Pos{Line: 13, Col: 9}) {
		t.Errorf("tests[0].to value at %+v", p)
	}
	if p := s.Positions.Key("tests[0].to"); p != (Pos{Line: 13, Col: 5}) {
		t.Errorf("tests[0].to key at %+v", p)
	}
	if s.Pools[1].Pos != (Pos{Line: 7, Col: 5}) || s.Tests[0].Pos != (Pos{Line: 10, Col: 5}) {
		t.Errorf("struct positions: pool %+v test %+v", s.Pools[1].Pos, s.Tests[0].Pos)
	}
	// An unwritten field falls back to where its parent starts.
	if p := s.Positions.Value("tests[0].args.qps"); p != (Pos{Line: 10, Col: 5}) {
		t.Errorf("fallback %+v", p)
	}
	var nilPos *Positions
	if nilPos.Has("x") || nilPos.Value("x") != (Pos{}) {
		t.Errorf("nil Positions must be usable")
	}
}

// Anchors and aliases are plain YAML and work; merge keys do not (above).
func TestDecodeAliases(t *testing.T) {
	s, err := LoadBytes("a.yaml", []byte(`apiVersion: rdmabench.io/v1alpha1
kind: Scenario
metadata: {name: m}
defaults:
  env: &env {UCX_TLS: "rc,sm"}
pools:
  - {name: a, env: *env}
  - {name: b, env: *env}
tests:
  - {name: t, tool: ib_write_bw, from: a, to: b, args: {sizes: &sz [4KiB, 1MiB]}}
  - {name: u, tool: ib_read_bw, from: a, to: b, args: {sizes: *sz}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pools[1].Env["UCX_TLS"] != "rc,sm" || s.Tests[1].Args.Sizes[1].Bytes != 1<<20 {
		t.Errorf("aliases: %+v %+v", s.Pools[1].Env, s.Tests[1].Args.Sizes)
	}
}

// Aliases multiply what the document holds (every test an alias of one
// with a long size list); decoding stops at a bound with an error.
func TestDecodeAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString(minimal)
	b.WriteString("  - &t {name: t, tool: ib_write_bw, from: a, args: {sizes: [" + strings.Repeat("4KiB, ", 300) + "4KiB]}}\n")
	for range 400 {
		b.WriteString("  - *t\n")
	}
	_, err := LoadBytes("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "expands to more than 100000 values") {
		t.Fatalf("want the expansion bound, got %.300v", err)
	}
}

func TestDecodeAcceptsPlainVariants(t *testing.T) {
	base := minimal + "  - {name: t, tool: ib_write_bw, from: a, to: b}\n"
	for name, text := range map[string]string{
		"crlf":         strings.ReplaceAll(base, "\n", "\r\n"),
		"bom":          "\ufeff" + base,
		"leading ---":  "# comment\n---\n" + base,
		"trailing ---": base + "---\n",
		"end marker":   base + "...\n",
	} {
		if _, err := LoadBytes(name, []byte(text)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Decode returns what it could decode alongside its errors, so that
// LoadBytes reports decode and validation problems in one pass.
func TestDecodePartial(t *testing.T) {
	s, err := Decode("p.yaml", []byte(minimal+"  - {name: t, tool: rping, from: a, to: c, args: {count: many}}\n"))
	var list ErrorList
	if s == nil || !errors.As(err, &list) || len(list) != 1 || list[0].Path != "tests[0].args.count" {
		t.Fatalf("partial decode: %v %v", s, err)
	}
	_, err = LoadBytes("p.yaml", []byte(minimal+"  - {name: t, tool: rping, from: a, to: c, args: {count: many}}\n"))
	if !errors.As(err, &list) || len(list) != 2 || list[0].Path != "tests[0].to" || list[1].Path != "tests[0].args.count" {
		t.Errorf("want the unknown pool and the bad count: %v", err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	for path, want := range map[string]string{
		dir + "/missing.yaml": dir + "/missing.yaml: no such file (",
		dir:                   dir + ": is a directory, not a scenario file (give the .yaml files inside it: " + dir + "/*.yaml)",
		// A device has no size to check first: the read itself is bounded.
		"/dev/zero": "/dev/zero: the file holds more than the 4194304 bytes a scenario may have (",
	} {
		_, err := Load(path)
		var list ErrorList
		if !errors.As(err, &list) || !strings.HasPrefix(err.Error(), want) || list[0].Hint == "" {
			t.Errorf("Load(%s) = %v, want prefix %q", path, err, want)
		}
	}
}

// Whole numbers follow YAML's own rules (0o10 is eight); a leading zero,
// octal to some YAML readers and decimal to others, is refused.
func TestDecodeIntegers(t *testing.T) {
	for text, want := range map[string]int{"4": 4, "0": 0, "0o10": 8, "0x10": 16, "+3": 3} {
		s := mustDecode(t, minimal+"  - {name: t, tool: ib_write_bw, from: a, to: b, args: {qps: "+text+"}}\n")
		if s.Tests[0].Args.QPs != want {
			t.Errorf("qps: %s = %d, want %d", text, s.Tests[0].Args.QPs, want)
		}
	}
	for _, bad := range []string{"4.5", "'4'", "010", "four", "99999999999999999999", "true", "[4]"} {
		_, err := Decode("t.yaml", []byte(minimal+"  - {name: t, tool: ib_write_bw, from: a, to: b, args: {qps: "+bad+"}}\n"))
		if err == nil || !strings.Contains(err.Error(), "tests[0].args.qps: ") {
			t.Errorf("qps: %s: %v", bad, err)
		}
		if tooLarge := strings.Contains(fmt.Sprint(err), "is too large"); tooLarge != (bad == "99999999999999999999") {
			t.Errorf("qps: %s: %v: \"is too large\" only for the number that does not fit", bad, err)
		}
	}
}
