package kube

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// retryWindow bounds how long a call keeps retrying while the API is
// unreachable (an apiserver restart, a control-plane upgrade).
const retryWindow = 90 * time.Second

// transient reports whether err means the request never reached a working
// apiserver, so that trying again is safe even for an exec: a refused
// connection, an apiserver shutting down or overloaded.
func transient(err error) bool {
	var broke streamBroke
	if err == nil || errors.As(err, &broke) {
		return false // the command ran: trying again would run it twice
	}
	var gone *errSessionGone
	if errors.As(err, &gone) {
		return gone.notStarted // never begun: a new session may run it
	}
	if kubeletUnreachable(err) {
		return false // the API answered; the pod's node did not (checkLost)
	}
	if errors.Is(err, syscall.ECONNREFUSED) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "apiserver is shutting down", "server sent GOAWAY", "TLS handshake timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// retry calls f until it succeeds, fails for good, ctx ends, or the API
// has been unreachable for retryWindow; backing off from 250 ms to 2 s.
func retry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(retryWindow)
	wait := 250 * time.Millisecond
	for {
		err := f()
		if !transient(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
