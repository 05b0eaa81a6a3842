package kube

import (
	"bytes"
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// What is tried again: a request that never reached a working apiserver,
// never an exec that already printed (it ran; a retry would run it twice).
func TestTransient(t *testing.T) {
	goaway := errors.New(`http2: server sent GOAWAY and closed the connection; LastStreamID=1`)
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), true},
		{goaway, true},
		{errors.New("apiserver is shutting down"), true},
		{streamBroke{goaway}, false},
		{fmt.Errorf("exec: %w", streamBroke{goaway}), false},
		{errors.New("pods \"x\" not found"), false},
	} {
		if got := transient(c.err); got != c.want {
			t.Errorf("transient(%v) = %v; want %v", c.err, got, c.want)
		}
	}
	var b bytes.Buffer
	w := &seenWriter{w: &b}
	if _, _ = w.Write(nil); w.seen {
		t.Error("an empty write counted as output")
	}
	if _, _ = w.Write([]byte("x")); !w.seen || b.String() != "x" {
		t.Error("output not seen or not passed on")
	}
}
