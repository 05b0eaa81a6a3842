package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/spf13/cobra"
)

// validateOptions are the flags and arguments of `rdmabench validate`.
type validateOptions struct {
	files  []string
	output string // text or json
	stdout io.Writer
	stderr io.Writer
}

func newValidateCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &validateOptions{stdout: stdout, stderr: stderr}
	cmd := &cobra.Command{
		Use: "validate FILE...",
		Example: `  rdmabench validate pd-disagg.yaml
  rdmabench validate scenarios/*.yaml`,
		Short: "Check scenario files; report every problem as FILE:LINE:COL",
		Long: `validate loads each scenario as run would (strict decoding, defaults,
validation) and prints "FILE: ok" for each valid one. Every problem of every
file goes to stderr, one per line, as FILE:LINE:COL: path: problem (hint).
It exits 2 when any file has a problem.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.files = args
			return runValidate(o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "text", "output format: text or json (a list of {file, ok, errors})")
	return cmd
}

// validateResult is one file's outcome in -o json.
type validateResult struct {
	File   string                  `json:"file"`
	OK     bool                    `json:"ok"`
	Errors []*scenarios.FieldError `json:"errors,omitempty"`
	// Warnings do not fail validation (exit 0): e.g. the placeholder image.
	Warnings []string `json:"warnings,omitempty"`
}

// PlaceholderImage is the tools image the shipped kube scenarios name: a
// tag the project does not publish. Users build the image (make image),
// push it to their registry and write that tag (docs/user-guide/images.md).
const PlaceholderImage = "quay.io/rdmabench/tools:latest"

// placeholderWarning says how to replace the placeholder image, named by
// key (cluster.image, or cluster.toolsImage: the init container's).
func placeholderWarning(path, key string) string {
	return fmt.Sprintf("%s: warning: %s is the placeholder %s, which is not published: build the tools image "+
		"(make image), push it (skopeo copy oci-archive:.work/images/rdmabench-tools.oci.tar docker://REGISTRY/rdmabench/tools:TAG) "+
		"and write REGISTRY/rdmabench/tools:TAG here (docs/user-guide/images.md)", path, key, PlaceholderImage)
}

func runValidate(o *validateOptions) error {
	if o.output != "text" && o.output != "json" {
		return usageError{fmt.Errorf("--output %q: want text or json", o.output)}
	}
	var results []validateResult
	failed := 0
	for _, f := range o.files {
		r := validateFile(f)
		results = append(results, r)
		if !r.OK {
			failed++
		}
		if o.output == "text" {
			printValidateText(o, r)
		}
	}
	if o.output == "json" {
		enc := json.NewEncoder(o.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	}
	if failed > 0 {
		return scenarioProblems{files: failed}
	}
	return nil
}

// validateFile loads one file; a non-scenario error still becomes a result.
func validateFile(path string) validateResult {
	sc, err := loadScenario(path)
	if err == nil {
		r := validateResult{File: path, OK: true}
		if sc.Backend == scenarios.BackendKube && sc.Cluster.Image == PlaceholderImage {
			r.Warnings = append(r.Warnings, placeholderWarning(path, "cluster.image"))
		} else if sc.Backend == scenarios.BackendKube && sc.Cluster.ToolsImageOf() == PlaceholderImage {
			r.Warnings = append(r.Warnings, placeholderWarning(path, "cluster.toolsImage"))
		}
		return r
	}
	var list scenarios.ErrorList
	if !errors.As(err, &list) {
		list = scenarios.ErrorList{{File: path, Message: err.Error()}}
	}
	return validateResult{File: path, Errors: list}
}

func printValidateText(o *validateOptions, r validateResult) {
	for _, w := range r.Warnings {
		fmt.Fprintln(o.stderr, w)
	}
	if r.OK {
		fmt.Fprintf(o.stdout, "%s: ok\n", r.File)
		return
	}
	for _, e := range r.Errors {
		fmt.Fprintln(o.stderr, e.Error())
	}
}

// scenarioProblems is returned once the problems have been printed: exit 2,
// with nothing more to say.
type scenarioProblems struct{ files int }

func (e scenarioProblems) Error() string {
	return fmt.Sprintf("%d scenario file(s) have problems", e.files)
}
func (e scenarioProblems) ExitCode() int { return exitUsage }
func (e scenarioProblems) Silent() bool  { return true }
