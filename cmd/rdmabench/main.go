// Command rdmabench benchmarks the RDMA fabric under LLM serving.
package main

import (
	"io"
	"os"

	"k8s.io/klog/v2"
)

func main() {
	// client-go logs through klog to stderr: "Unhandled Error … use of
	// closed network connection" each time an exec stream ends. What
	// matters reaches rdmabench as errors, said in its own words.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	os.Exit(run(os.Args[1:]))
}
