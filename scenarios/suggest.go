package scenarios

import (
	"fmt"
	"strings"
)

// editDistance is the Levenshtein distance between a and b, compared
// case-insensitively (so "UCx" is close to "UCX").
func editDistance(a, b string) int {
	ra, rb := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// nearest returns the candidate closest to word, or "" when none is close
// enough to be a plausible typo (at most a third of the word, at least 2).
func nearest(word string, candidates []string) string {
	best, bestD := "", -1
	limit := max(2, len([]rune(word))/3)
	for _, c := range candidates {
		d := editDistance(word, c)
		if strings.EqualFold(word, c) {
			d = 0
		}
		if d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// suggest builds the hint for a value that is not one of the known ones:
// `did you mean "decode"? pools are: prefill, decode`.
func suggest(word, kind string, known []string) string {
	list := kind + " are: " + strings.Join(known, ", ")
	if len(known) == 0 {
		list = "there are no " + kind
	}
	if n := nearest(word, known); n != "" {
		return fmt.Sprintf("did you mean %q? %s", n, list)
	}
	return list
}
