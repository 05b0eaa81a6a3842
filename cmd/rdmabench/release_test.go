package main

import (
	"os"
	"strings"
	"testing"
)

// TestReleaseConfiguration: the release workflow runs the Makefile's
// targets (one definition of a release), for the four platforms, with
// checksums, and pushes the tools images under the names the CronJob and
// the shipped scenarios use.
func TestReleaseConfiguration(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	wf, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64", "sha256sum rdmabench-* > SHA256SUMS", "CGO_ENABLED=0", "release: assets"} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("Makefile lacks %q", want)
		}
	}
	for _, want := range []string{`tags: ["v*"]`, `make release VERSION="${GITHUB_REF_NAME}"`, "make image", "quay.io/rdmabench/$name", "gh release create"} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("release.yml lacks %q", want)
		}
	}
	if !strings.HasPrefix(PlaceholderImage, "quay.io/rdmabench/tools:") || !strings.HasPrefix(imageNote("quay.io/rdmabench/tools:latest", false), "# image quay.io/rdmabench/tools:") {
		t.Errorf("the published name quay.io/rdmabench/tools is not the one the scenarios (%s) and the CronJob use", PlaceholderImage)
	}
}
