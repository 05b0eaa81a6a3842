package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rdmabench/rdmabench/parsers"
	"github.com/rdmabench/rdmabench/runner/tools"
	"github.com/rdmabench/rdmabench/scenarios"
	"github.com/rdmabench/rdmabench/tool"
	"github.com/spf13/cobra"
)

// parseOptions are the flags and arguments of `rdmabench parse`.
type parseOptions struct {
	tool       string
	command    string // the command line that wrote the files, when given
	commandSet bool   // --command was given, even empty
	output     string
	files      []string
}

// parsedFile is one file's measurements.
type parsedFile struct {
	name string
	ms   []parsers.Measurement
}

// newParseCmd builds `rdmabench parse`: raw tool output in, measurements
// out, for logs captured outside rdmabench or to check a parser.
func newParseCmd(stdin io.Reader, stdout io.Writer) *cobra.Command {
	o := &parseOptions{}
	cmd := &cobra.Command{
		Use:   "parse [--tool TOOL] FILE... [-o json|table]",
		Short: "Parse raw output of perftest, rping, ucx_perftest, iperf3 … into measurements",
		Long: `parse reads files holding the raw output of a benchmark tool (or - for stdin)
and prints the measurements rdmabench would record: JSON (one object, or an
array when there are several tables) or a table. Without --tool the tool is
recognised from the text. A run that failed is reported with ok=false and an
error class; parse itself exits 0 unless a file cannot be read or recognised.`,
		Example: `  rdmabench parse ib_write_bw.client.log
  rdmabench parse --tool ucx_perftest -o table client.txt
  rdmabench parse --command "ucx_perftest 10.0.0.2 -t ucp_get -m cuda -s 1048576" client.txt
  ib_send_lat -a 10.0.0.2 | rdmabench parse --tool ib_send_lat -`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{fmt.Errorf("parse needs at least one FILE (or - for stdin)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.files = args
			o.commandSet = cmd.Flags().Changed("command")
			return runParse(o, stdin, stdout)
		},
	}
	cmd.Flags().StringVar(&o.tool, "tool", "", "tool that wrote the files (default: the --command's program, else recognised from the text)")
	cmd.Flags().StringVar(&o.command, "command", "", "the command line that wrote the files; ucx_perftest prints neither its test nor its size, "+
		"so its -t/-m pick the test's own RMA table among UCX's protocol tables and its -s the size, as rdmabench run does")
	cmd.Flags().StringVarP(&o.output, "output", "o", "json", "output format: json or table")
	return cmd
}

func runParse(o *parseOptions, stdin io.Reader, stdout io.Writer) error {
	if o.output != "json" && o.output != "table" {
		return usageError{fmt.Errorf("-o %q: want json or table", o.output)}
	}
	if o.tool != "" {
		if _, ok := parsers.FamilyOf(o.tool); !ok {
			return usageError{unknownToolError(o.tool)}
		}
	}
	argv, err := shellWords(o.command)
	if err != nil {
		return usageError{fmt.Errorf("--command: %w", err)}
	}
	if o.commandSet && len(argv) == 0 {
		return usageError{fmt.Errorf("--command is empty: give the command line that wrote the files, or leave --command out")}
	}
	if len(argv) > 0 {
		program := filepath.Base(argv[0])
		if _, known := parsers.FamilyOf(program); known {
			if o.tool != "" && o.tool != program {
				return usageError{fmt.Errorf("--command runs %s, --tool says %s: give one tool, or leave --tool out", program, o.tool)}
			}
			o.tool = program
		}
	}
	var all []parsedFile
	for _, f := range o.files {
		ms, err := parseFile(f, o.tool, stdin)
		if err != nil {
			return err
		}
		if len(argv) > 0 {
			ms = withCommand(ms, argv[1:])
		}
		all = append(all, parsedFile{name: f, ms: ms})
	}
	if o.output == "table" {
		return renderParseTable(stdout, all)
	}
	return writeParseJSON(stdout, all)
}

// shellWords splits a command line as a POSIX shell does its words:
// 'single' and "double" quotes group, a backslash escapes outside single
// quotes; no expansion. An unclosed quote is an error.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unclosed \" in %q", line)
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// withCommand reads from a ucx_perftest command line what its output
// lacks, as rdmabench run does from its plan: the size of samples without
// one, and the test's own RMA table as the transport (a -m cuda get over
// cuda_ipc, not the tcp of its control writes).
func withCommand(ms []parsers.Measurement, args []string) []parsers.Measurement {
	for i := range ms {
		if ms[i].Tool != tool.UCXPerftest {
			continue
		}
		if size := tools.UCXPerftestSize(args); size > 0 {
			for j := range ms[i].Samples {
				if ms[i].Samples[j].Bytes == 0 {
					ms[i].Samples[j].Bytes = size
				}
			}
		}
		ms[i].Transport.ForOpMemories(tools.UCXPerftestPath(args))
	}
	return ms
}

// parseFile reads one file (or stdin for "-") and parses it with tool, or
// with the tool its text reveals.
func parseFile(name, tool string, stdin io.Reader) ([]parsers.Measurement, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", name, err)}
	}
	if tool == "" {
		head := data
		if len(head) > 64<<10 {
			head = head[:64<<10]
		}
		var ok bool
		if tool, ok = parsers.Detect(head); !ok {
			return nil, usageError{fmt.Errorf("%s: cannot tell which tool wrote it; name it with --tool (one of %s)",
				name, strings.Join(parsers.Tools(), ", "))}
		}
	}
	ms, err := parsers.Parse(tool, bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ms, nil
}

// writeParseJSON prints one object for a single measurement, else an array.
func writeParseJSON(w io.Writer, files []parsedFile) error {
	var ms []parsers.Measurement
	for _, f := range files {
		ms = append(ms, f.ms...)
	}
	var v any = ms
	if len(ms) == 1 {
		v = ms[0]
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// displayName shortens a path for the table.
func displayName(p string) string {
	if p == "-" {
		return "stdin"
	}
	return filepath.Base(p)
}

// unknownToolError is parsers' error with the nearest tool name first.
func unknownToolError(tool string) error {
	err := &parsers.UnknownToolError{Tool: tool}
	if n := scenarios.Nearest(tool, parsers.Tools()); n != "" {
		return fmt.Errorf("did you mean %q? %w", n, err)
	}
	return err
}
