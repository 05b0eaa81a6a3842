package scenarios

import (
	"strings"
	"testing"
)

// The Kubernetes name rules agree with k8s.io/apimachinery's validation
// package on the cases its own tests use.
func TestKubernetesNames(t *testing.T) {
	long63, long64 := strings.Repeat("a", 63), strings.Repeat("a", 64)
	sub253 := strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("a", 61)
	for _, tc := range []struct {
		in                          string
		subdomain, qualified, value bool
	}{
		{"", false, false, true},
		{"a", true, true, true},
		{"nvidia", true, true, true},
		{"regcred", true, true, true},
		{"registry.example.com-pull", true, true, true},
		{"My_Secret", false, true, true},
		{"a.b", true, true, true},
		{"-a", false, false, false},
		{"a-", false, false, false},
		{"a..b", false, true, true},
		{"A_b.c-D", false, true, true},
		{"nvidia.com/gpu", false, true, false},
		{"app.kubernetes.io/name", false, true, false},
		{"Example.COM/x", false, false, false},
		{"example.com/", false, false, false},
		{"/name", false, false, false},
		{"a/b/c", false, false, false},
		{"bad key", false, false, false},
		{"bad value!", false, false, false},
		{long63, true, true, true},
		{long64, true, false, false},
		{"example.com/" + long63, false, true, false},
		{"example.com/" + long64, false, false, false},
		{sub253, true, false, false},
		{sub253 + "a", false, false, false},
		{sub253 + "/a", false, true, false},
		{sub253 + "a/a", false, false, false},
	} {
		if got := isDNS1123Subdomain(tc.in); got != tc.subdomain {
			t.Errorf("isDNS1123Subdomain(%q) = %v", tc.in, got)
		}
		if got := qualifiedNameProblem(tc.in) == ""; got != tc.qualified {
			t.Errorf("qualifiedNameProblem(%q) = %q", tc.in, qualifiedNameProblem(tc.in))
		}
		if got := labelValueProblem(tc.in) == ""; got != tc.value {
			t.Errorf("labelValueProblem(%q) = %q", tc.in, labelValueProblem(tc.in))
		}
	}
}
