package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmabench/rdmabench/scenarios"
)

// completeScenario completes a SCENARIO argument (run, preflight, plan):
// the shipped names that start with what was typed, else files, for a
// scenario of one's own.
func completeScenario(_ *cobra.Command, args []string, typed string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []string
	for _, n := range scenarios.ShippedNames() {
		if strings.HasPrefix(n, typed) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, cobra.ShellCompDirectiveDefault
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
