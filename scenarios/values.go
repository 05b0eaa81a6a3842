package scenarios

import (
	"encoding/json"
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
