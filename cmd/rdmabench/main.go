// Command rdmabench benchmarks the RDMA fabric under LLM serving.
package main

import "os"

func main() { os.Exit(run(os.Args[1:])) }
