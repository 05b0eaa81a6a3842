package scenarios

import (
	"fmt"
	"strings"
)

// Checks of the unit-bearing values: each is parsed here (decoding keeps
// only the text) and reported at the value's own position.

func (v *validator) checkSize(path string, s *Size) bool {
	if err := s.Parse(); err != nil {
		v.errf(path, "write a size such as 4KiB, 8MiB, 1GiB or plain bytes (65536)", "%v", err)
		return false
	}
	if s.Bytes <= 0 {
		v.errf(path, "a size must be more than 0 bytes", "size %q is not positive", s.Raw)
		return false
	}
	return true
}

// checkRate parses a rate; auto is allowed only where the NIC can tell.
func (v *validator) checkRate(path string, r *Rate, autoOK bool) {
	if r.Raw == "auto" && !autoOK {
		v.errf(path, "auto only applies to lineRate; write a rate such as 350Gb/s", "auto is not allowed here")
		return
	}
	if err := r.Parse(); err != nil {
		hint := "write a rate such as 400Gb/s, 200Gbps or 25GB/s"
		if autoOK {
			hint += ", or auto to read it from the NIC"
		}
		v.errf(path, hint, "%v", err)
		return
	}
	if !r.Auto && r.Bps <= 0 {
		v.errf(path, "a rate must be more than 0", "rate %q is not positive", r.Raw)
	}
}

func (v *validator) checkPercent(path string, p *Percent) {
	if err := p.Parse(); err != nil {
		v.errf(path, "write a percent such as 90%", "%v", err)
		return
	}
	if p.Value < 0 || p.Value > 100 {
		v.errf(path, "a percent of line rate is between 0% and 100%", "%q is out of range", p.Raw)
	}
	// 0.9 meant as ninety percent would read as 0.9% and always pass.
	if p.Value > 0 && p.Value < 1 && !strings.Contains(p.Raw, "%") {
		v.errf(path, fmt.Sprintf("write %g%% for the fraction %s, or %s%% for less than one percent", p.Value*100, p.Raw, p.Raw),
			"%s is ambiguous: a fraction or a percent", p.Raw)
	}
}

func (v *validator) checkDuration(path string, d *Duration) {
	if err := d.Parse(); err != nil {
		v.errf(path, "write a duration such as 10s, 2m or 500us", "%v", err)
		return
	}
	if d.Value <= 0 {
		v.errf(path, "a duration must be longer than 0", "duration %q is not positive", d.Raw)
	}
}
