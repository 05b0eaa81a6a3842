// Command rdmabench benchmarks the RDMA fabric under LLM serving.
package main

import (
	"flag"
	"io"
	"os"

	"k8s.io/klog/v2"
)

func main() {
	silenceKlog()
	os.Exit(run(os.Args[1:]))
}

// silenceKlog keeps client-go's klog lines off stderr: "Unhandled Error …
// use of closed network connection" each time an exec stream ends, at
// ERROR, which klog writes to stderr past its threshold even when it logs
// to no file. What matters reaches rdmabench as errors, said in its own
// words.
func silenceKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for k, v := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL", "one_output": "true"} {
		_ = fs.Set(k, v)
	}
	klog.SetOutput(io.Discard)
}
