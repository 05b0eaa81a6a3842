package parsers

import "strings"

// stripLogPrefix removes a log collector's time stamp that CleanLine leaves
// (it strips bracketed ones): "07:52:39 DEBUG| [stderr] " (Avocado),
// "2026-07-28 10:17:18,674 " and "2026-07-28T10:17:18.674Z ".
func stripLogPrefix(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	t := s[i:]
	if len(t) < 8 || t[0] < '0' || t[0] > '9' {
		return s
	}
	n := timestampLen(t)
	if n == 0 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return s
	}
	rest := strings.TrimLeft(t[n:], " \t")
	if i := strings.IndexByte(rest, '|'); i > 0 && i <= 6 && isUpperWord(strings.TrimSpace(rest[:i])) {
		rest = strings.TrimPrefix(rest[i+1:], " ")
		for _, tag := range []string{"[stdout] ", "[stderr] "} {
			rest = strings.TrimPrefix(rest, tag)
		}
	}
	return rest
}

// timestampLen returns the length of a leading "YYYY-MM-DD[T ]HH:MM:SS"
// or "HH:MM:SS" stamp (with optional fraction and Z), or 0.
func timestampLen(s string) int {
	i := 0
	if digitsAt(s, 0, 4) && at(s, 4, '-') && digitsAt(s, 5, 2) && at(s, 7, '-') && digitsAt(s, 8, 2) &&
		(at(s, 10, 'T') || at(s, 10, ' ')) {
		i = 11
	}
	if !(digitsAt(s, i, 2) && at(s, i+2, ':') && digitsAt(s, i+3, 2) && at(s, i+5, ':') && digitsAt(s, i+6, 2)) {
		return 0
	}
	i += 8
	if at(s, i, '.') || at(s, i, ',') {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j > i+1 {
			i = j
		}
	}
	if at(s, i, 'Z') {
		i++
	}
	return i
}

func at(s string, i int, c byte) bool { return i < len(s) && s[i] == c }

func digitsAt(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for k := i; k < i+n; k++ {
		if s[k] < '0' || s[k] > '9' {
			return false
		}
	}
	return true
}

func isUpperWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}
