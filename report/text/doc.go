// Package text writes a report for a terminal or a CI log: the summary
// table, worst first, the preflight checks, and the derived views
// (waterfalls, low pairs, the KV budget) as aligned columns, whose rows the
// HTML reuses.
package text
