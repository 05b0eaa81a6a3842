package kube

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// retryCreate is retry for a create. A try that failed on the way back
// (an apiserver restarting: a timeout, GOAWAY) may have stored the object;
// the next try then answers AlreadyExists for the run's own object. That
// is success when get finds the object labelled with this run.
func (b *Backend) retryCreate(ctx context.Context, create func() error, get func() (metav1.Object, error)) error {
	tries := 0
	err := retry(ctx, func() error {
		tries++
		return create()
	})
	if tries > 1 && apierrors.IsAlreadyExists(err) {
		if obj, gerr := get(); gerr == nil && obj.GetLabels()[LabelRun] == b.opts.RunID {
			return nil
		}
	}
	return err
}
