package scenarios

// Low-pair references: what expect.lowPair.below is a percent of.
const (
	LowPairOfBest        = "best"        // the best pair of the same matrix
	LowPairOfExpectation = "expectation" // minBandwidth, or minLineRate × lineRate
)

// LowPairReferences lists expect.lowPair.of values.
var LowPairReferences = []string{LowPairOfBest, LowPairOfExpectation}

// DefaultLowPairRetests is how often a low pair is run again when the
// scenario does not say: twice tells a bad link (low every time) from noise
// (recovered every time) and from a flaky one (both).
const DefaultLowPairRetests = 2

// MaxLowPairRetests bounds the retests of one pair.
const MaxLowPairRetests = 10

// LowPair is expect.lowPair: after an all-to-all matrix, the pairs whose
// best bandwidth is below Below percent of the reference are run again
// Retests times, and the endpoints they share are ranked, so that the
// report names a suspect endpoint or link instead of leaving a heatmap
// to be read.
type LowPair struct {
	// Below is the threshold, a percent of Of ("80%").
	Below Percent `yaml:"below" json:"below"`
	// Of is best (the best pair of the matrix, default) or expectation
	// (minBandwidth, or minLineRate of lineRate).
	Of string `yaml:"of,omitempty" json:"of,omitempty" schema:"enum=lowPairReferences"`
	// Retests is how many times each low pair is run again (0–10, default 2).
	Retests *int `yaml:"retests,omitempty" json:"retests,omitempty"`

	Pos Pos `yaml:"-" json:"-"`
}

// RetestCount is Retests, or the default when unset.
func (l *LowPair) RetestCount() int {
	if l == nil {
		return 0
	}
	if l.Retests == nil {
		return DefaultLowPairRetests
	}
	return *l.Retests
}

// Reference is Of, or best when unset.
func (l *LowPair) Reference() string {
	if l == nil || l.Of == "" {
		return LowPairOfBest
	}
	return l.Of
}

// lowPair checks tests[i].expect.lowPair.
func (v *validator) lowPair(path string, t *Test) {
	l := t.Expect.LowPair
	if l == nil {
		return
	}
	if t.Pattern != PatternAllToAll {
		v.errf(path, "set pattern: all-to-all; low pairs are found among the pairs of a matrix",
			"lowPair needs an all-to-all test, not %q", t.Pattern)
	}
	bp := path + ".below"
	if !l.Below.IsSet() {
		v.errf(bp, "write the threshold such as below: 80% (of the best pair)", "below is missing")
	} else {
		v.checkPercent(bp, &l.Below)
		if l.Below.Parse() == nil && l.Below.Value == 0 {
			v.errf(bp, "0% finds no pair; write the threshold such as 80%", "below must be more than 0%%")
		}
	}
	if v.written(path+".of", l, "of") || l.Of != "" {
		if v.checkOneOf(path+".of", l.Of, "references", LowPairReferences) && l.Of == LowPairOfExpectation &&
			!t.Expect.MinBandwidth.IsSet() && !t.Expect.MinLineRate.IsSet() {
			v.errf(path+".of", "add minBandwidth or minLineRate to expect, or write of: best",
				"of: expectation needs a bandwidth expectation")
		}
	}
	if l.Retests != nil && (*l.Retests < 0 || *l.Retests > MaxLowPairRetests) {
		v.errf(path+".retests", "retests of each low pair: 0 (only rank the endpoints) to 10",
			"%d retests is out of range", *l.Retests)
	}
}
