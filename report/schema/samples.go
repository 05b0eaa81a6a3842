package schema

import (
	"fmt"
)

// SampleCoverage is what a sampled all-to-all (tests[].sample) covered of
// its matrix: the run takes Rounds of the matrix's MatrixRounds, from
// FirstRound on (chosen by Seed), so that RunsToCover runs with
// consecutive seeds measure every pair.
type SampleCoverage struct {
	Test         string `json:"test"`
	Partners     int    `json:"partners"`
	Seed         int64  `json:"seed"`
	FirstRound   int    `json:"firstRound"`
	Rounds       int    `json:"rounds"`
	MatrixRounds int    `json:"matrixRounds"`
	// PlannedPairs are the ordered pairs the run took, MeasuredPairs those
	// with a result that is not skipped (an error counts: the pair was
	// tried), MatrixPairs every ordered pair of the matrix.
	PlannedPairs  int `json:"plannedPairs"`
	MeasuredPairs int `json:"measuredPairs"`
	MatrixPairs   int `json:"matrixPairs"`
	// CoveredPct is MeasuredPairs as a percent of MatrixPairs.
	CoveredPct  float64 `json:"coveredPct"`
	RunsToCover int     `json:"runsToCover"`
}

// MeasuredPairs counts the ordered pairs of test's matrix with a result
// (retests aside): what a sample actually covered.
func MeasuredPairs(results []Result, test string) int {
	return len(matrixFigures(results, test, 0))
}

// Covered fills MeasuredPairs and CoveredPct from the results.
func (c *SampleCoverage) Covered(results []Result) {
	c.MeasuredPairs = MeasuredPairs(results, c.Test)
	if c.MatrixPairs > 0 {
		c.CoveredPct = 100 * float64(c.MeasuredPairs) / float64(c.MatrixPairs)
	}
}

// Line says it in words, for the terminal and the HTML.
func (c SampleCoverage) Line() string {
	return fmt.Sprintf("%s: a sample of %d partners per endpoint (seed %d: %d of the matrix's %d rounds, from round %d): %d of %d ordered pairs measured, %.1f%% of the matrix; %d runs with consecutive seeds cover it",
		c.Test, c.Partners, c.Seed, c.Rounds, c.MatrixRounds, c.FirstRound,
		c.MeasuredPairs, c.MatrixPairs, c.CoveredPct, c.RunsToCover)
}
