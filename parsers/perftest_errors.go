package parsers

import "strings"

// ptErrors are perftest's failure messages (formats.md §1.6, tools.md §1.5)
// and what each means. The first one seen in a run decides its class.
var ptErrors = []signature{
	{"Did not detect devices", ClassNoDevice},
	{"Unable to find the Infiniband/RoCE device", ClassNoDevice},
	{"No IB devices found", ClassNoDevice},
	{"IB device ", ClassNoDevice}, // "IB device %s not found"; checked with " not found" below
	{"Couldn't connect to ", ClassConnectionFailed},
	{"Unable to open file descriptor for socket connection", ClassConnectionFailed},
	{"Unable to init the socket connection", ClassConnectionFailed},
	{"Couldn't read remote address", ClassConnectionFailed},
	{"Couldn't read reports", ClassConnectionFailed},
	{"Failed to exchange data between server and clients", ClassConnectionFailed},
	{"Found Incompatibility issue with GID types", ClassConnectionFailed},
	{"Unable to Connect the HCA's through the link", ClassConnectionFailed},
	{"mismatch: local=", ClassParameterMismatch},
	{"Failed to negotiate parameters", ClassParameterMismatch},
	{"not compatible with versions older than", ClassParameterMismatch},
	{"Parser function exited with Error", ClassUsageError},
	{"Invalid Command line", ClassUsageError},
	{"Invalid Command or flag", ClassUsageError},
	{"Duplicated argument", ClassUsageError},
	{"Invalid Connection type", ClassUsageError},
	{"is only available in", ClassUsageError},
	{"Multiple QPs only available on bw tests", ClassUsageError},
	{"doesn't support running on all sizes", ClassUsageError},
	{"Did not get Message for", ClassTimeout},
	{"Completion with error", ClassToolError},
	{"Couldn't get context for the device", ClassToolError},
	{"Couldn't allocate context", ClassToolError},
	{"Couldn't create IB resources", ClassToolError},
	{"Unable to create QP", ClassToolError},
	{"Failed to create QP", ClassToolError},
	{"Couldn't listen to port", ClassToolError},
	{"Error occurred while running infinitely", ClassToolError},
	{"Can't produce a report", ClassToolError},
	{"Error: BW result is below bw limit", ClassToolError},
	{"Error: Msg rate  is below msg_rate limit", ClassToolError},
	{"Unsupported memory type", ClassToolError},
}

// ptWarnings are lines perftest prints that do not fail a run but that a
// reader should see.
var ptWarnings = []string{
	"Conflicting CPU frequency values detected",
	"WARNING:",
	"Requested QP size might be too big",
	"Actual inline-size",
	"Requested mtu is higher than active mtu",
	"CPU Utilization works only with Duration mode",
}

// ptError classifies a failure line of perftest.
func ptError(line string) (ErrorClass, bool) {
	s, ok := matchSignature(line, ptErrors)
	if !ok {
		return ClassNone, false
	}
	if s.text == "IB device " && !strings.Contains(line, " not found") {
		return ClassNone, false
	}
	return s.class, true
}

// ptWarning reports a warning line.
func ptWarning(line string) bool {
	for _, w := range ptWarnings {
		if strings.Contains(line, w) {
			return true
		}
	}
	return false
}
