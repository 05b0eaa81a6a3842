package main

import (
	"time"

	"github.com/spf13/pflag"
)

// sampleSeed is --sample-seed: which block of a sampled all-to-all's
// matrix a run takes (tests[].sample). Unset, it is the day (days since
// 1970-01-01 UTC), so that a nightly run moves on to the next block each
// night and covers the matrix without anyone keeping count.
type sampleSeed struct {
	seed  int64
	flags *pflag.FlagSet
	now   func() time.Time // time.Now unless a test says
}

func (s *sampleSeed) register(fl *pflag.FlagSet) {
	fl.Int64Var(&s.seed, "sample-seed", 0, "sampled all-to-all tests (sample: K): which block of the matrix's rounds this run takes (default: the day number, so that successive nights cover the matrix)")
	s.flags = fl
}

// value is the seed given, else today's day number.
func (s *sampleSeed) value() int64 {
	if s.flags != nil && s.flags.Changed("sample-seed") {
		return s.seed
	}
	now := time.Now
	if s.now != nil {
		now = s.now
	}
	return now().UTC().Unix() / 86400
}
