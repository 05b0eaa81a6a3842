package scenarios

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rdmabench/rdmabench/units"
	"gopkg.in/yaml.v3"
)

// The unit-bearing scalars below keep the text the user wrote and where,
// so that validation can report a bad value at its exact position. Decoding
// never fails on a bad value; Parse (called by validation) does.

// Size is a byte size written as "4KiB", "8MiB", "1GiB" or plain bytes.
type Size struct {
	Raw   string
	Bytes int64
	Pos   Pos
}

// Rate is a bandwidth ("400Gb/s", "25GB/s") or "auto".
type Rate struct {
	Raw  string
	Bps  float64 // bits per second; 0 when Auto or unset
	Auto bool
	Pos  Pos
}

// Percent is "90%".
type Percent struct {
	Raw   string
	Value float64
	Pos   Pos
}

// Duration is "10s", "2m", "500us" or plain seconds.
type Duration struct {
	Raw   string
	Value time.Duration
	Pos   Pos
}

// GPUCount is a pool's gpus: a count, or "all" (every GPU of the host the
// endpoint runs on, counted when the run is planned: ResolveGPUs).
type GPUCount struct {
	Raw string
	N   int  // the count (for "all", once resolved)
	All bool // written as "all"
	Pos Pos
}

// GPUs is a count written in Go (tests, generated scenarios).
func GPUs(n int) GPUCount { return GPUCount{Raw: strconv.Itoa(n), N: n} }

// AllGPUs is the keyword of GPUCount.
const AllGPUs = "all"

// IsSet reports whether the field was written.
func (s Size) IsSet() bool { return s.Raw != "" }

// IsSet reports whether the field was written.
func (r Rate) IsSet() bool { return r.Raw != "" }

// IsSet reports whether the field was written.
func (p Percent) IsSet() bool { return p.Raw != "" }

// IsSet reports whether the field was written.
func (d Duration) IsSet() bool { return d.Raw != "" }

// Parse fills Bytes from Raw.
func (s *Size) Parse() error {
	b, err := units.ParseSize(s.Raw)
	if err == nil {
		s.Bytes = b
	}
	return err
}

// Parse fills Bps (or Auto) from Raw.
func (r *Rate) Parse() error {
	if r.Raw == "auto" {
		r.Auto = true
		return nil
	}
	v, err := units.ParseRate(r.Raw)
	if err == nil {
		r.Bps = v
	}
	return err
}

// Parse fills Value from Raw.
func (p *Percent) Parse() error {
	v, err := units.ParsePercent(p.Raw)
	if err == nil {
		p.Value = v
	}
	return err
}

// Parse fills Value from Raw.
func (d *Duration) Parse() error {
	v, err := units.ParseDuration(d.Raw)
	if err == nil {
		d.Value = v
	}
	return err
}

func scalarText(n *yaml.Node) (string, Pos) {
	return n.Value, Pos{Line: n.Line, Col: n.Column}
}

// UnmarshalYAML records the text and its position; a count is read at
// once, so that code reading N before validation sees it.
func (g *GPUCount) UnmarshalYAML(n *yaml.Node) error {
	g.Raw, g.Pos = scalarText(n)
	_ = g.Parse()
	return nil
}

// Parse fills N (or All) from Raw: a whole number of 0 or more, or all.
func (g *GPUCount) Parse() error {
	if g.Raw == "" {
		return nil // unset, or a count written in Go (N)
	}
	if strings.TrimSpace(g.Raw) == AllGPUs {
		g.All = true
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(g.Raw))
	if err != nil || n < 0 {
		return fmt.Errorf("%q is neither a count nor all", g.Raw)
	}
	g.N = n
	return nil
}

// MarshalYAML writes the text back as the user wrote it.
func (g GPUCount) MarshalYAML() (any, error) {
	if g.All {
		return AllGPUs, nil
	}
	return g.N, nil
}

// IsZero lets omitempty drop unset values.
func (g GPUCount) IsZero() bool { return g.Raw == "" && g.N == 0 && !g.All }

// MarshalJSON writes a count as a number and all as "all".
func (g GPUCount) MarshalJSON() ([]byte, error) {
	if g.All {
		return jsonString(AllGPUs)
	}
	return json.Marshal(g.N)
}

// UnmarshalYAML records the text and its position.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	s.Raw, s.Pos = scalarText(n)
	return nil
}

// UnmarshalYAML records the text and its position.
func (r *Rate) UnmarshalYAML(n *yaml.Node) error {
	r.Raw, r.Pos = scalarText(n)
	return nil
}

// UnmarshalYAML records the text and its position.
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	p.Raw, p.Pos = scalarText(n)
	return nil
}

// UnmarshalYAML records the text and its position.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	d.Raw, d.Pos = scalarText(n)
	return nil
}

// MarshalYAML writes the text back as the user wrote it.
func (s Size) MarshalYAML() (any, error) { return s.Raw, nil }

// MarshalYAML writes the text back as the user wrote it.
func (r Rate) MarshalYAML() (any, error) { return r.Raw, nil }

// MarshalYAML writes the text back as the user wrote it.
func (p Percent) MarshalYAML() (any, error) { return p.Raw, nil }

// MarshalYAML writes the text back as the user wrote it.
func (d Duration) MarshalYAML() (any, error) { return d.Raw, nil }

// IsZero lets omitempty drop unset values.
func (s Size) IsZero() bool { return s.Raw == "" }

// IsZero lets omitempty drop unset values.
func (r Rate) IsZero() bool { return r.Raw == "" }

// IsZero lets omitempty drop unset values.
func (p Percent) IsZero() bool { return p.Raw == "" }

// IsZero lets omitempty drop unset values.
func (d Duration) IsZero() bool { return d.Raw == "" }

// MarshalJSON writes the text as the user wrote it.
func (s Size) MarshalJSON() ([]byte, error) { return jsonString(s.Raw) }

// MarshalJSON writes the text as the user wrote it.
func (r Rate) MarshalJSON() ([]byte, error) { return jsonString(r.Raw) }

// MarshalJSON writes the text as the user wrote it.
func (p Percent) MarshalJSON() ([]byte, error) { return jsonString(p.Raw) }

// MarshalJSON writes the text as the user wrote it.
func (d Duration) MarshalJSON() ([]byte, error) { return jsonString(d.Raw) }

func jsonString(s string) ([]byte, error) { return json.Marshal(s) }
