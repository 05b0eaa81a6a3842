package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// enforceUsageErrors makes cobra's own complaints usage errors (exit 2):
// a wrong number of arguments to any command, and an unknown command. Flag
// errors already are (root's FlagErrorFunc). Call it after every command
// has been added.
func enforceUsageErrors(root *cobra.Command) {
	root.Args = unknownCommand
	if root.SuggestionsMinimumDistance <= 0 {
		root.SuggestionsMinimumDistance = 2
	}
	if root.RunE == nil && root.Run == nil {
		root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Args != nil {
				sub.Args = usageArgs(sub.Args)
			}
			walk(sub)
		}
	}
	walk(root)
}

// usageArgs wraps a cobra argument check so that its error is a usageError.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())}
		}
		return nil
	}
}

// unknownCommand rejects words after "rdmabench" that name no command,
// suggesting the nearest ones as cobra would.
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	} else {
		msg += " (see rdmabench --help)"
	}
	return usageError{errors.New(msg)}
}
