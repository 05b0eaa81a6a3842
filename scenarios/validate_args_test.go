package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// Arguments the tools themselves refuse are refused at load time, with the
// tool's own limit in the hint, so a run does not fail on the cluster.
func TestArgLimits(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"{qps: 16384}", ""},
		{"{qps: 16385}", "t.yaml:10:62: tests[0].args.qps: 16385 queue pairs is too many (perftest -q accepts at most 16384)"},
		{"{qps: 0}", "t.yaml:10:62: tests[0].args.qps: must be at least 1, not 0 (perftest -q: queue pairs per process, 1–16384)"},
		{"{qps: 99999999999999999999}", "t.yaml:10:62: tests[0].args.qps: 99999999999999999999 is too large (write a smaller whole number, like 4)"},
	} {
		_, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: t, tool: ib_write_bw, from: a, to: b, args: "+c.args+"}\n"))
		if got := strings.TrimSpace(errText(err)); got != c.want {
			t.Errorf("args %s:\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}

// Sizes outside the tool's own range, and perftest's -a with -D.
func TestToolSizesAndSweep(t *testing.T) {
	for _, c := range []struct{ test, want string }{
		{"{name: t, tool: rping, from: a, to: b, args: {sizes: [23, 64KiB]}}", "t.yaml:10:63: tests[0].args.sizes[1]: size 64KiB is outside rping's range (rping -S accepts 23 to 65535 bytes)"},
		{"{name: t, tool: rping, from: a, to: b, args: {sizes: [22, 65535]}}", "t.yaml:10:59: tests[0].args.sizes[0]: size 22 is outside rping's range (rping -S accepts 23 to 65535 bytes)"},
		{"{name: t, tool: ib_read_bw, from: a, to: b, args: {sizes: [1GiB, 2GiB]}}", "t.yaml:10:70: tests[0].args.sizes[1]: size 2GiB is too large for perftest (perftest -s accepts at most 2147483647 bytes (2GiB - 1))"},
		{"{name: t, tool: ucx_perftest, from: a, to: b, args: {sizes: [2GiB]}}", ""},
		{"{name: t, tool: ib_write_bw, from: a, to: b, args: {sweep: true, duration: 5s}}", `t.yaml:10:80: tests[0].args.duration: sweep and duration exclude each other (perftest runs -a only by iterations ("Duration mode currently doesn't support running on all sizes"); keep either sweep or duration)`},
	} {
		_, err := LoadBytes("t.yaml", []byte(minimal+"  - "+c.test+"\n"))
		if got := strings.TrimSpace(errText(err)); got != c.want {
			t.Errorf("args %s:\n got %q\nwant %q", c.test, got, c.want)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A plain number below 1 is refused for minLineRate: 0.9 meant as 90% would
// read as 0.9% and pass every test.
func TestPercentFraction(t *testing.T) {
	for in, want := range map[string]string{
		"0.9":  "t.yaml:11:72: tests[0].expect.minLineRate: 0.9 is ambiguous: a fraction or a percent (write 90% for the fraction 0.9, or 0.9% for less than one percent)",
		"0.9%": "",
		"90":   "",
		"0":    "",
	} {
		text := strings.Replace(minimal, "tests:", "lineRate: 100Gb/s\ntests:", 1) +
			"  - {name: t, tool: ib_write_bw, from: a, to: b, expect: {minLineRate: " + in + "}}\n"
		_, err := LoadBytes("t.yaml", []byte(text))
		if got := strings.TrimSpace(errText(err)); got != want {
			t.Errorf("minLineRate %s:\n got %q\nwant %q", in, got, want)
		}
	}
}

// nixlbench flags rdmabench sets itself (its etcd, a group per leg that it
// cleans up) are refused in extra in every gflags spelling; others pass.
func TestNixlOwnedFlagsInExtra(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{`["--num_threads=2", "--enable_pt"]`, ""},
		{`["--benchmark_group=mine"]`, "tests[0].args.extra[0]: --benchmark_group cannot be set in extra"},
		{`["--num_threads", "2", "-benchmark-group", "g"]`, "tests[0].args.extra[2]: --benchmark_group cannot be set in extra"},
		{`["--etcd_endpoints", "http://x:2379"]`, "tests[0].args.extra[0]: --etcd_endpoints cannot be set in extra"},
		{`["benchmark_group"]`, ""}, // a value, not a flag
		{`["--config_file=/etc/fromenv.toml"]`, `tests[0].args.extra[0]: "--config_file=/etc/fromenv.toml" contains "fromenv" (nixlbench refuses any argument containing fromenv`},
	} {
		_, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: t, tool: nixlbench, from: a, to: b, args: {extra: "+c.extra+"}}\n"))
		got := errText(err)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("extra %s:\n got %q\nwant %q", c.extra, got, c.want)
		}
	}
}

// perRequest needs the serving section (its KV layout shapes the transfer)
// and takes the block size and batch from it, so sizes cannot be given too.
func TestPerRequestNeedsServing(t *testing.T) {
	test := "  - {name: kv, tool: nixlbench, from: a, to: b, args: {perRequest: true%s}}\n"
	serving := "serving: {model: llama-3.1-8b, contextLengths: [1024]}\n"
	for _, c := range []struct{ extra, serving, want string }{
		{"", serving, ""},
		{"", "", "t.yaml:10:68: tests[0].args.perRequest: perRequest needs the scenario's serving section (add a serving section"},
		{", maxBatch: 4", serving, "tests[0].args.maxBatch: maxBatch and perRequest exclude each other"},
		{", minSize: 4KiB", serving, "tests[0].args.minSize: minSize and perRequest exclude each other"},
	} {
		_, err := LoadBytes("t.yaml", []byte(minimal+fmt.Sprintf(test, c.extra)+c.serving))
		got := errText(err)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("perRequest%s (serving %q):\n got %q\nwant %q", c.extra, c.serving, got, c.want)
		}
	}
}

// A perRequest test pulls, as vLLM's NIXL connector does: READ unless the
// test says otherwise (nixlbench's own default is WRITE).
func TestPerRequestDefaultsToRead(t *testing.T) {
	serving := "serving: {model: llama-3.1-8b, contextLengths: [1024]}\n"
	for _, c := range []struct{ args, want string }{
		{"perRequest: true", "READ"},
		{"perRequest: true, op: WRITE", "WRITE"},
		{"minSize: 4KiB", "WRITE"},
	} {
		s, err := LoadBytes("t.yaml", []byte(minimal+"  - {name: kv, tool: nixlbench, from: a, to: b, args: {"+c.args+"}}\n"+serving))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Tests[0].Args.Op; got != c.want {
			t.Errorf("%s: op %q, want %q", c.args, got, c.want)
		}
	}
}
