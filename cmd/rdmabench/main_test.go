package main

import (
	"errors"
	"io"
	"os"
	"testing"

	"k8s.io/klog/v2"
)

// client-go's errors through klog (an exec stream closing) never reach
// rdmabench's stderr.
func TestKlogSilenced(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	silenceKlog()
	klog.ErrorS(errors.New("use of closed network connection"), "Unhandled Error")
	klog.Error("Websocket Ping failed")
	klog.Flush()
	os.Stderr = saved
	w.Close()
	if out, _ := io.ReadAll(r); len(out) > 0 {
		t.Errorf("klog wrote to stderr: %s", out)
	}
}
