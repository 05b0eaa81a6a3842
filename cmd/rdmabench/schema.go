package main

import (
	"io"

	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/spf13/cobra"
)

func newSchemaCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:     "schema",
		Example: `  rdmabench schema > rdmabench.schema.json   # then point your editor's YAML schema at it`,
		Short:   "Print the JSON Schema of scenario files, for editors",
		Long: `schema prints the JSON Schema (draft 2020-12) of rdmabench scenario files,
generated from the same types and value lists the loader checks. Save it and
point your editor at it, e.g. with the YAML language server:

  rdmabench schema > rdmabench-scenario.schema.json
  # yaml-language-server: $schema=./rdmabench-scenario.schema.json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := stdout.Write(scenarios.JSONSchema())
			return err
		},
	}
}
