package main

import "github.com/rdmabench/rdmabench/scenarios"

// quickProfile cuts the scenario to its quick profile when asked, and
// names the profile for the plan ("" when not).
func quickProfile(sc *scenarios.Scenario, quick bool) string {
	if !quick {
		return ""
	}
	scenarios.Quick(sc)
	return scenarios.ProfileQuick
}
