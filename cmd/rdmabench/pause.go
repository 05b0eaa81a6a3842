package main

import (
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// newPauseCmd is the pods' keep-alive: the command of a pod's one
// container, from rdmabench's bundle (whatever the image, it needs no
// sleep or shell of its own). It waits, doing nothing, and exits 0 at
// once on SIGTERM or SIGINT, so a deleted pod goes without waiting out
// its grace. Hidden: people never type it.
func newPauseCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "pause",
		Short:  "Wait until SIGTERM or SIGINT (a pod's keep-alive)",
		Args:   cobra.NoArgs,
		Hidden: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			<-ctx.Done()
			return nil
		},
	}
}
