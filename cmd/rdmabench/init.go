package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/spf13/cobra"
)

// initOptions are the flags and arguments of `rdmabench init`.
type initOptions struct {
	name   string
	output string // file, directory, or "-" for stdout
	force  bool
	stdout io.Writer
	stderr io.Writer
}

func newInitCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &initOptions{stdout: stdout, stderr: stderr}
	cmd := &cobra.Command{
		Use: "init [NAME]",
		Example: `  rdmabench init                       # list the shipped scenarios
  rdmabench init pd-disagg             # writes ./pd-disagg.yaml to adapt
  rdmabench init kube-check -o -       # to stdout`,
		Short: "Write a shipped scenario to start from (no NAME: list them)",
		Long: `init writes one of the scenarios built into rdmabench to NAME.yaml in the
current directory (or to -o PATH: a file, a directory, or - for stdout), to
adapt to your cluster. It never overwrites a file unless --force is given.
Without NAME it lists the shipped scenarios.`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return scenarios.ShippedNames(), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.name = args[0]
			}
			return runInit(o)
		},
	}
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "where to write: a file, a directory, or - for stdout (default ./NAME.yaml)")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite an existing file")
	return cmd
}

func runInit(o *initOptions) error {
	if o.name == "" {
		return listShipped(o.stdout)
	}
	sc, ok := scenarios.ShippedScenario(o.name)
	if !ok {
		return usageError{fmt.Errorf("no shipped scenario %q (%s)", o.name, shippedHint(o.name))}
	}
	if o.output == "-" {
		_, err := o.stdout.Write(sc.Data)
		return err
	}
	path := initTarget(o.output, sc.Name)
	if err := writeNew(path, sc.Data, o.force); err != nil {
		return err
	}
	fmt.Fprintf(o.stderr, "wrote %s (%s); check it with: rdmabench validate %s\n", path, sc.Name, path)
	return nil
}

func shippedHint(name string) string {
	names := scenarios.ShippedNames()
	for _, n := range names {
		if strings.Contains(n, name) || strings.Contains(name, n) {
			return fmt.Sprintf("did you mean %q? shipped: %s", n, strings.Join(names, ", "))
		}
	}
	return "shipped: " + strings.Join(names, ", ")
}

// listShipped prints the shipped scenarios with their descriptions.
func listShipped(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION")
	for _, s := range scenarios.ShippedScenarios() {
		fmt.Fprintf(tw, "%s\t%s\n", s.Name, s.Description)
	}
	fmt.Fprintln(tw, "\nrdmabench init NAME writes NAME.yaml here (-o PATH elsewhere).")
	return tw.Flush()
}

// initTarget is the file to write: ./NAME.yaml, PATH, or PATH/NAME.yaml
// when PATH is a directory (or ends with a slash).
func initTarget(output, name string) string {
	file := name + ".yaml"
	if output == "" {
		return file
	}
	if st, err := os.Stat(output); (err == nil && st.IsDir()) || strings.HasSuffix(output, string(filepath.Separator)) {
		return filepath.Join(output, file)
	}
	return output
}

// writeNew writes data to path, refusing to replace a file unless force.
func writeNew(path string, data []byte, force bool) error {
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return usageError{fmt.Errorf("%s already exists (use --force to overwrite it, or -o to write elsewhere)", path)}
	}
	if err != nil {
		return usageError{fmt.Errorf("cannot write %s: %w", path, err)}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
