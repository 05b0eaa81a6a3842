package docs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// markdownFiles are the README and every Markdown file of the docs tree,
// as paths relative to this folder.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"../README.md"}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

var (
	fenceRE = regexp.MustCompile("(?ms)^ {0,3}(```|~~~).*?^ {0,3}(```|~~~)[^\n]*$")
	codeRE  = regexp.MustCompile("`[^`\n]+`")
	linkRE  = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
)

// prose is a Markdown text without its code: fenced blocks and inline code
// spans hold commands and output, not links.
func prose(md string) string {
	md = fenceRE.ReplaceAllStringFunc(md, func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) })
	return codeRE.ReplaceAllString(md, "code")
}

// TestRelativeLinksResolve: every relative link of the README and the docs
// tree names a file or folder of the repository, and every #anchor a
// heading of its target (GitHub's anchors), so that moving or renaming a
// page or a heading cannot leave a dead link behind.
func TestRelativeLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		a := headingAnchors(string(data))
		anchors[path] = a
		return a
	}
	links := 0
	for _, file := range markdownFiles(t) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := prose(string(data))
		for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[4]:m[5]]
			line := 1 + strings.Count(text[:m[0]], "\n")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", file, line, target, resolved)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(resolved, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", file, line, target)
				continue
			}
			if !anchorsOf(resolved)[anchor] {
				t.Errorf("%s:%d: link %q: no heading of %s has the anchor #%s", file, line, target, resolved, anchor)
			}
		}
	}
	if links < 50 {
		t.Errorf("only %d relative links found: is the link pattern still right?", links)
	}
}

var headingRE = regexp.MustCompile(`(?m)^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$`)

// headingAnchors are the anchors GitHub gives a document's headings: the
// heading's text (inline markup dropped, a link's text kept) in lower
// case, every character but letters, digits, spaces, '-' and '_'
// dropped, spaces turned into '-'; a repeated anchor gets -1, -2 …
func headingAnchors(md string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range headingRE.FindAllStringSubmatch(prose0(md), -1) {
		a := anchorOf(m[1])
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// prose0 drops fenced code only: a heading keeps its inline code's text.
func prose0(md string) string {
	return fenceRE.ReplaceAllStringFunc(md, func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) })
}

var inlineLinkRE = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

func anchorOf(heading string) string {
	heading = inlineLinkRE.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestHeadingAnchorsFollowGitHub(t *testing.T) {
	for heading, want := range map[string]string{
		"The ssh backend (`backend: ssh`)":                          "the-ssh-backend-backend-ssh",
		"nixlbench's etcd":                                          "nixlbenchs-etcd",
		"One container per pod: your serving image, and the bundle": "one-container-per-pod-your-serving-image-and-the-bundle",
		"pools[]": "pools",
		"Try it on a local test cluster (`make kube-up`)":      "try-it-on-a-local-test-cluster-make-kube-up",
		"Networks: a worked NetworkAttachmentDefinition":       "networks-a-worked-networkattachmentdefinition",
		"The kube lane (`make e2e-kube`, part of `make test`)": "the-kube-lane-make-e2e-kube-part-of-make-test",
		"--keep":                         "--keep",
		"rdmabench completion bash":      "rdmabench-completion-bash",
		"What a run does on the cluster": "what-a-run-does-on-the-cluster",
		"Where bandwidth is lost: [waterfall](waterfall.md) a→b": "where-bandwidth-is-lost-waterfall-ab",
	} {
		if got := anchorOf(heading); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", heading, got, want)
		}
	}
	a := headingAnchors("# A\n\n## A\n\n```\n# not a heading\n```\n")
	if !a["a"] || !a["a-1"] || a["not-a-heading"] {
		t.Errorf("anchors: %v", a)
	}
}
