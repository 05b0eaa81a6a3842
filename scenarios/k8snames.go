package scenarios

import (
	"regexp"
	"strings"
)

// Kubernetes name rules for the pod fields of the cluster section, so that
// a name the API server would refuse is caught (with its position) before a
// run creates anything. They are the few regexps of
// k8s.io/apimachinery/pkg/util/validation written out: that module is not a
// dependency of the scenarios package, and is a large one for three checks.

const (
	dns1123SubdomainMax = 253
	qualifiedNameMax    = 63
	labelValueMax       = 63
)

var (
	dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	// qualifiedNamePart is the name of a qualified name, and a non-empty label value.
	qualifiedNamePart = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
)

// isDNS1123Subdomain reports a valid object name of most kinds (Secret,
// RuntimeClass, PriorityClass): lowercase letters, digits, '-' and '.'.
func isDNS1123Subdomain(s string) bool {
	return len(s) <= dns1123SubdomainMax && dns1123Subdomain.MatchString(s)
}

// qualifiedNameProblem says why s is not a qualified name (a label or
// annotation key, a taint key): an optional DNS subdomain prefix and '/',
// then a name of at most 63 characters. It is "" for a valid one.
func qualifiedNameProblem(s string) string {
	name := s
	if prefix, rest, ok := strings.Cut(s, "/"); ok {
		name = rest
		switch {
		case prefix == "":
			return "the prefix before '/' is empty"
		case !isDNS1123Subdomain(prefix):
			return "the prefix before '/' must be a DNS subdomain (lowercase letters, digits, '-' and '.')"
		}
	}
	switch {
	case name == "":
		return "the name is empty"
	case len(name) > qualifiedNameMax:
		return "the name is longer than 63 characters"
	case !qualifiedNamePart.MatchString(name):
		return "the name must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	}
	return ""
}

// labelValueProblem says why s is not a label value (also a toleration's
// value); "" for a valid one, the empty value included.
func labelValueProblem(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > labelValueMax:
		return "it is longer than 63 characters"
	case !qualifiedNamePart.MatchString(s):
		return "it must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	}
	return ""
}
