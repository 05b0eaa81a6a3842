package parsers

import (
	"bufio"
	"io"
	"strings"
)

// maxLine bounds one line; longer lines are cut rather than failing the scan.
const maxLine = 1 << 20

// newLineScanner returns a scanner that tolerates very long lines.
func newLineScanner(r io.Reader) *bufio.Scanner {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 0, 64*1024), maxLine)
	s.Split(scanLinesLenient)
	return s
}

// scanLinesLenient is bufio.ScanLines that cuts over-long lines instead of
// stopping with ErrTooLong, so a garbage line never hides the rest.
func scanLinesLenient(data []byte, atEOF bool) (int, []byte, error) {
	adv, tok, err := bufio.ScanLines(data, atEOF)
	if adv == 0 && tok == nil && err == nil && len(data) >= maxLine {
		return len(data), data, nil
	}
	return adv, tok, err
}

// CleanLine removes what launchers and log collectors put around a tool's
// own line: a trailing CR (CRLF captures), and leading prefixes such as
// Open MPI's "[1,0]<stdout>:", srun's "0: ", a CI timestamp
// "[2026-07-28T10:17:17.743Z] ", or a rank tag "[0] ". Several may stack.
func CleanLine(line string) string {
	line = strings.TrimRight(line, "\r")
	for {
		trimmed := strings.TrimLeft(line, " \t")
		next, ok := stripOnePrefix(trimmed)
		if !ok {
			return line
		}
		line = next
	}
}

func stripOnePrefix(s string) (string, bool) {
	if s == "" {
		return s, false
	}
	// Open MPI --tag-output: "[1,0]<stdout>:" or "<stderr>:".
	if s[0] == '[' {
		if end := strings.IndexByte(s, ']'); end > 0 {
			inner := s[1:end]
			rest := s[end+1:]
			switch {
			case isMPITag(inner) && (strings.HasPrefix(rest, "<stdout>:") || strings.HasPrefix(rest, "<stderr>:")):
				return rest[len("<stdout>:"):], true
			case isTimestamp(inner):
				return strings.TrimPrefix(rest, " "), true
			case isDigits(inner) && (strings.HasPrefix(rest, " ") || strings.HasPrefix(rest, "\t") || rest == ""):
				// "[0] " rank tag at the start of a line.
				return rest, true
			case isDigits(inner) && len(rest) > 0 && (rest[0] == '#' || rest[0] == '-' || (rest[0] >= '0' && rest[0] <= '9')):
				// "[0]#  Rank …", "[0]      1048576 …" from per-write rank tags.
				return rest, true
			}
		}
		return s, false
	}
	// srun --label: "0: " or "12: ".
	if i := strings.IndexByte(s, ':'); i > 0 && i <= 5 && isDigits(s[:i]) && len(s) > i+1 && s[i+1] == ' ' {
		return s[i+2:], true
	}
	return s, false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isMPITag matches "1,0" (job,rank).
func isMPITag(s string) bool {
	i := strings.IndexByte(s, ',')
	return i > 0 && isDigits(s[:i]) && isDigits(s[i+1:])
}

// isTimestamp matches ISO-like timestamps: "2026-07-28T10:17:17.743Z",
// "2024-01-02 10:11:12", "10:17:17.743".
func isTimestamp(s string) bool {
	if len(s) < 8 {
		return false
	}
	digits, colons := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == ':':
			colons++
		case c == '-' || c == 'T' || c == 'Z' || c == '.' || c == ' ' || c == '+' || c == ',':
		default:
			return false
		}
	}
	return colons >= 2 && digits >= 6
}
