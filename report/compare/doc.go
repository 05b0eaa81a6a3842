// Package compare sets two runs side by side: it matches their results by
// test, pair, backend, operation and size, classifies each change by Rule
// (a regression is beyond the threshold and beyond the noise), warns where
// the two environments differ, and prints the comparison for a terminal.
// The HTML page of a comparison is report/html's, its JUnit report/export's.
package compare
