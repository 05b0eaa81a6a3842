package parsers

import (
	"math"
	"strconv"
	"testing"
)

// TestFastDecimalMatchesStrconv: the fast path must give strconv's result
// bit for bit, and leave every other form to strconv.
func TestFastDecimalMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "0.00", "-0.00", "23396.08", "0.002925", "9.154486", "224958464", "779.21",
		"0.147331", "1280.96", "123456789012345", "1.23456789012345", "99999999999999.9", "-4.5", ".5", "5."} {
		want, _ := strconv.ParseFloat(s, 64)
		got, ok := finiteFloat(s)
		if !ok || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("finiteFloat(%q) = %v, %v; strconv says %v", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "-", ".", "1.2.3", "1e5", "12a", "1234567890123456", "nan", "+1"} {
		if _, ok := fastDecimal(s); ok {
			t.Errorf("fastDecimal(%q) accepted", s)
		}
	}
}

func FuzzFastDecimal(f *testing.F) {
	for _, s := range []string{"23396.08", "0.002925", "-1.5", "1e5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := fastDecimal(s)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("fastDecimal(%q) = %v; strconv %v, %v", s, got, want, err)
		}
	})
}
