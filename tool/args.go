package tool

// A tool's argument schema: the keys of a test's args it reads, each with
// its kind, default, allowed values and the tool's own rules. The scenario
// loader applies the defaults and checks the values by reading it; it
// keeps the positions, so every problem is still reported at the
// FILE:LINE:COL of the value it is about.

// Kind is the form of an argument's value. The loader checks the form (a
// size parses and is positive, a duration is longer than 0, a list has no
// empty item) before the tool's rules see the value.
type Kind int

// Argument kinds.
const (
	KindString Kind = iota
	KindInt
	KindBool
	KindSize     // one size (4KiB)
	KindSizes    // a list of sizes, each checked
	KindDuration // 10s, 500us
	KindStrings  // a list of words (each one of OneOf, or not empty)
)

// Arg is one key of args a tool reads. A key is checked when the test
// wrote it, when it holds a value (a default), or always (Always).
type Arg struct {
	// Key is the args key as scenarios write it (sizes, backend …).
	Key  string
	Kind Kind
	// Default is the value a test that left a string key empty runs with,
	// written out by the loader so the report shows it ("": none); nil:
	// no default.
	Default func(v Values) string
	// Always checks the key even when empty: a default that must be one
	// of OneOf, or a key the tool cannot run without (Required).
	Always bool
	// Required: an empty value is "<tool> needs args.<key>".
	Required bool
	// EmptyOK leaves an empty value unchecked (backend: backends names
	// them instead).
	EmptyOK bool
	// OneOf lists the values a string key (or each item of a list) may
	// take; What names them in errors ("NIXL ops").
	OneOf []string
	What  string
	// Min is an integer's least value (0: no bound). Hint explains it, or
	// what a list of words holds.
	Min  int
	Hint string
	// Conflict is a rule on the key's relation to other keys, checked
	// first when the test wrote the key ("sweep and sizes exclude each
	// other"): a message and hint, or "".
	Conflict func(v Values) (msg, hint string)
	// Check is the tool's own rule on a value (each item of a list), once
	// its form, OneOf and Min passed: a message and hint, or "".
	Check func(x Value) (msg, hint string)
}

// Value is one value a Check reads: an integer, a size (Bytes, as written
// in Text) or a word (Text).
type Value struct {
	Int   int
	Bytes int64
	Text  string
}

// Size is a size argument as a rule reads it: its bytes, its text, and
// whether its form passed (parsed, more than 0 bytes).
type Size struct {
	Bytes int64
	Raw   string
	OK    bool
}

// Values is what a tool's defaults and rules read of a test's args.
type Values struct {
	// Get returns a key's value as plain Go (string, int, bool, []string,
	// Size, []Size), nil when unset or unknown.
	Get func(key string) any
	// Has says whether the test wrote the key and the tool reads it.
	Has func(key string) bool
	// Serving says whether the scenario has a serving section.
	Serving bool
}

// String is a string key's value ("" when unset).
func (v Values) String(key string) string { s, _ := v.Get(key).(string); return s }

// Bool is a bool key's value.
func (v Values) Bool(key string) bool { b, _ := v.Get(key).(bool); return b }

// Strings is a list key's value.
func (v Values) Strings(key string) []string { s, _ := v.Get(key).([]string); return s }

// Size is a size key's value.
func (v Values) Size(key string) Size { s, _ := v.Get(key).(Size); return s }

// Problem is what a Rule found: at args.<Key> (Key may index a list:
// backends[1]), a message and a hint.
type Problem struct {
	Key, Msg, Hint string
}

// Rule is a tool's rule across its keys, checked after every key's own
// checks; it returns each problem found.
type Rule func(v Values) []Problem

// ArgKeys are the args keys a test of the tool may write, in the schema's
// order (errors list them so).
func (s *Spec) ArgKeys() []string {
	out := make([]string, len(s.Args))
	for i := range s.Args {
		out[i] = s.Args[i].Key
	}
	return out
}

// fixed is a default that does not depend on other keys.
func fixed(value string) func(Values) string { return func(Values) string { return value } }
