package scenarios

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden and docs/reference/scenario-keys.md")

// brokenCases are the files in testdata/broken and the exact problems each
// must produce: "LINE:COL path" in file order (no path for whole-file problems).
var brokenCases = []struct {
	name string
	want []string
}{
	{"arg-meaningless", []string{"16:7 tests[0].args.qps", "19:7 tests[0].expect.maxLatency"}},
	{"bad-duration", []string{"15:14 tests[0].timeout", "17:17 tests[0].args.duration"}},
	{"bad-percent", []string{"17:20 tests[0].expect.minLineRate", "23:20 tests[1].expect.minLineRate"}},
	{"bad-rate", []string{"5:11 lineRate", "17:21 tests[0].expect.minBandwidth"}},
	{"bad-size", []string{"16:21 tests[0].args.sizes[1]", "16:26 tests[0].args.sizes[2]", "16:29 tests[0].args.sizes[3]", "16:34 tests[0].args.sizes[4]"}},
	{"binary-not-utf8", []string{"1:1"}},
	{"binary-nul", []string{"2:9"}},
	{"document-is-list", []string{"1:1"}},
	{"document-is-scalar", []string{"1:1"}},
	{"duplicate-key", []string{"15:5 tests[0].tool"}},
	{"duplicate-names", []string{"8:11 pools[1].name", "13:11 tests[1].name"}},
	{"empty", []string{"1:1"}},
	{"kube-needs-image", []string{"6:1 cluster.image", "7:14 cluster.namespace"}},
	// Label and annotation keys are judged at the key, label values at the value.
	// Per-family containers are gone: cluster.images and pools[].images
	// are refused at their keys, saying what to write instead.
	{"kube-images", []string{"8:3 cluster.images", "13:5 pools[0].images"}},
	// Whatever they hold (a list, an empty string), refused the same way.
	{"kube-images-not-mapping", []string{"9:3 cluster.images", "12:5 pools[0].images"}},
	// A GPU resource named (amd.com/gpu, a MIG slice) is the pod's GPUs:
	// a pool's gpus of another count is refused at gpus.
	// CPU lists as Linux writes them, on the local backend only.
	{"cpusets-bad", []string{"8:22 pools[0].cpusets[1]", "8:29 pools[0].cpusets[2]", "8:34 pools[0].cpusets[3]", "10:15 pools[1].cpusets[0]"}},
	{"cpusets-kube", []string{"11:5 pools[0].cpusets"}},
	{"kube-gpus-disagree", []string{"12:11 pools[0].gpus", "16:11 pools[2].gpus"}},
	{"kube-labels-annotations", []string{"10:5 cluster.labels.rdmabench.io/run", "11:5 cluster.labels.bad key", "12:29 cluster.labels.app.kubernetes.io/name",
		"14:5 cluster.labels.Example.COM/x", "15:11 cluster.labels.long", "17:5 cluster.annotations.k8s.v1.cni.cncf.io/networks",
		"18:5 cluster.annotations.rdmabench.io/note", "19:5 cluster.annotations./nope"}},
	{"kube-pod-fields", []string{"8:3 cluster.networks", "10:20 cluster.imagePullPolicy", "11:31 cluster.imagePullSecrets[1]",
		"11:35 cluster.imagePullSecrets[2]", "12:21 cluster.runtimeClassName", "13:22 cluster.priorityClassName", "16:5 pools[0].networks"}},
	// What each pod gets: quantities, /dev/shm within memory, page sizes
	// and whole pages, DRA claims named once with one source, a pod
	// patch of metadata and spec, pools it may share nodes with.
	{"kube-pod-resources", []string{"8:13 cluster.platform", "9:19 cluster.failFastWindow", "10:8 cluster.cpu", "12:12 cluster.shmSize",
		"13:20 cluster.hugepages.2Mi", "13:25 cluster.hugepages.4Mi", "15:71 cluster.resourceClaims[0].resourceClaimTemplateName",
		"16:7 cluster.resourceClaims[1]", "18:5 cluster.podPatch.kind", "19:11 cluster.podPatch.spec", "22:13 pools[0].memory",
		"24:16 pools[0].resourceClaims[0].name", "25:22 pools[0].shareNodesWith[0]", "25:26 pools[0].shareNodesWith[1]"}},
	// nixlbench's buffer must fit in a DRAM side's pod memory (issue 31).
	{"kube-nixl-memory", []string{"19:38 tests[0].args.maxBatch", "24:20 tests[1].args.extra[0]"}},
	// A missing key is reported where its toleration starts.
	{"kube-tolerations", []string{"9:54 cluster.tolerations[0].value", "10:7 cluster.tolerations[1].key", "12:17 cluster.tolerations[2].operator",
		"13:15 cluster.tolerations[2].effect", "14:12 cluster.tolerations[3].key", "16:26 cluster.tolerations[3].tolerationSeconds",
		"20:26 cluster.tolerations[4].tolerationSeconds", "22:14 cluster.tolerations[5].value", "27:19 pools[0].tolerations[0].operator",
		"32:15 pools[1].tolerations[0].key"}},
	{"line-rate-missing", []string{"16:20 tests[0].expect.minLineRate"}},
	{"local-with-cluster", []string{"5:1 cluster", "9:5 pools[0].networks", "11:5 pools[1].tolerations"}},
	{"many-errors", []string{"9:15 pools[0].replicas", "11:5 pools[1].replicaz", "14:11 tests[0].tool", "18:11 tests[1].from", "20:12 tests[1].args.qps", "20:27 tests[1].args.count", "21:11 tests[2].name", "26:21 tests[2].args.sizes[1]", "28:20 tests[2].expect.minLineRate"}},
	// sample: at least 1, and only on an all-to-all (nccl: not at all).
	{"sample-checks", []string{"13:13 tests[0].sample", "18:13 tests[1].sample", "22:13 tests[2].sample", "26:5 tests[3].sample"}},
	{"merge-key", []string{"19:7 tests[0].env"}},
	{"missing-apiversion", []string{"1:1 apiVersion"}},
	{"deepep-args", []string{"13:13 tests[0].args.mode", "14:15 tests[0].args.hidden", "16:13 tests[0].args.topk",
		"17:14 tests[0].args.dtype", "18:12 tests[0].args.sms", "19:17 tests[0].args.llTokens",
		"20:18 tests[0].args.moeLayers"}},
	{"nccl-checks", []string{"15:5 tests[0].pattern", "17:19 tests[0].args.collective", "18:19 tests[0].args.stepFactor"}},
	{"nixl-enums", []string{"16:16 tests[0].args.backend", "17:11 tests[0].args.op", "18:21 tests[0].args.initiatorSeg", "19:16 tests[0].args.minSize"}},
	{"no-pools-no-tests", []string{"1:1 pools", "1:1 tests"}},
	{"only-comments", []string{"1:1"}},
	{"pairwise-unequal", []string{"11:5 tests[0].pattern"}},
	{"pattern-needs-two", []string{"12:14 tests[0].pattern"}},
	{"replicas-zero", []string{"7:15 pools[0].replicas", "9:15 pools[1].replicas"}},
	{"requires-contradiction", []string{"15:15 tests[0].requires", "18:13 tests[0].args.test", "23:15 tests[1].requires"}},
	// hosts[].rails are other NICs' IP addresses, each once, none the data
	// address; crossRails is rping's, a boolean.
	{"cross-rails", []string{"10:23 hosts[0].rails[1]", "10:31 hosts[0].rails[2]", "10:41 hosts[0].rails[3]",
		"20:19 tests[0].args.crossRails", "26:7 tests[1].args.crossRails"}},
	// perNode: at least 1, no more than the replicas, kube only; a pool's
	// networks are shared by a node's endpoints (one network) or split
	// among them (a multiple of perNode), nothing in between.
	{"kube-per-node", []string{"11:14 pools[0].perNode", "14:14 pools[1].perNode", "17:14 pools[2].perNode"}},
	{"local-per-node", []string{"8:5 pools[0].perNode"}},
	{"ssh-hosts", []string{"11:13 pools[0].hosts[0]", "12:5 pools[1]"}},
	{"syntax-indentation", []string{"13:4"}},
	{"syntax-mapping-values", []string{"13:17"}},
	{"syntax-unclosed-flow", []string{"14:5"}},
	{"syntax-unclosed-quote", []string{"5:3"}},
	{"tab-indentation", []string{"12:1"}},
	{"two-documents", []string{"15:1"}},
	{"unknown-backend", []string{"5:10 backend"}},
	{"unknown-key-nested", []string{"15:5 tests[0].arg"}},
	{"unknown-key-top", []string{"1:1 tests", "5:1 pool"}},
	{"unknown-pattern", []string{"15:14 tests[0].pattern"}},
	{"unknown-pool", []string{"13:11 tests[0].from", "14:9 tests[0].to"}},
	{"unknown-tool", []string{"12:11 tests[0].tool"}},
	// A misspelled key beside the real one does not hide the real one's
	// problem, and an unknown tool does not hide an unknown pool.
	{"misspelled-beside-real-key", []string{"7:15 pools[0].replicas", "8:5 pools[0].replicaz", "11:11 tests[0].tool", "12:11 tests[0].from"}},
	{"wrong-apiversion", []string{"1:13 apiVersion"}},
	{"wrong-kind", []string{"2:7 kind"}},
	{"wrong-type-bool", []string{"16:14 tests[0].args.sweep"}},
	{"wrong-type-int", []string{"7:15 pools[0].replicas"}},
	{"wrong-type-list", []string{"16:14 tests[0].args.sizes"}},
	{"wrong-type-mapping", []string{"6:3 pools"}},
	{"wrong-type-scalar-for-map", []string{"15:10 tests[0].env"}},
	{"lowpair-checks", []string{"15:24 tests[0].expect.lowPair.below", "15:34 tests[0].expect.lowPair.of", "15:50 tests[0].expect.lowPair.retests",
		"21:16 tests[1].expect.lowPair", "27:7 tests[2].expect.lowPair.below", "27:21 tests[2].expect.lowPair.of",
		"27:34 tests[2].expect.lowPair.threshold", "33:7 tests[3].expect.lowPair"}},
	{"serving-checks", []string{"13:10 serving.model", "14:14 serving.latentDim", "16:12 serving.kvDtype",
		"17:20 serving.contextLengths[0]", "19:14 serving.prefillTP", "21:3 serving.pageSize"}},
	{"serving-shape", []string{"12:1 serving", "15:13 serving.decodeTP"}},
	{"utf16-bom", []string{"1:1"}},
	{"utf16be-no-bom", []string{"1:1"}},
}

// Every broken scenario fails with exactly the expected positions and
// paths, each with a hint, and the full text matches its golden file.
func TestBrokenScenarios(t *testing.T) {
	files, _ := filepath.Glob("testdata/broken/*.yaml")
	if len(files) != len(brokenCases) {
		t.Errorf("%d files in testdata/broken, %d cases in the table", len(files), len(brokenCases))
	}
	for _, tc := range brokenCases {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata/broken", tc.name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			s, err := LoadBytes(tc.name+".yaml", data)
			if s != nil || err == nil {
				t.Fatalf("want an error, got a scenario")
			}
			var list ErrorList
			if !errors.As(err, &list) || list.ExitCode() != 2 {
				t.Fatalf("error %T is not an ErrorList with exit code 2", err)
			}
			checkPositions(t, list, tc.name+".yaml", tc.want)
			checkGolden(t, tc.name, err.Error()+"\n")
		})
	}
}

func checkPositions(t *testing.T, list ErrorList, file string, want []string) {
	t.Helper()
	var got []string
	for _, e := range list {
		got = append(got, strings.TrimSpace(itoa(e.Line)+":"+itoa(e.Col)+" "+e.Path))
		if e.File != file || e.Hint == "" || e.Message == "" {
			t.Errorf("%s: file %q, message %q, hint %q: want the file, a message and a hint", e, e.File, e.Message, e.Hint)
		}
		if !strings.HasPrefix(e.Error(), file+":"+itoa(e.Line)+":"+itoa(e.Col)+": ") {
			t.Errorf("%q does not start with FILE:LINE:COL", e.Error())
		}
	}
	if strings.Join(got, " | ") != strings.Join(want, " | ") {
		t.Errorf("positions:\n got %q\nwant %q\n%v", got, want, list)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// checkGolden compares text with testdata/golden/NAME.txt (-update rewrites it).
func checkGolden(t *testing.T, name, text string) {
	t.Helper()
	path := filepath.Join("testdata/golden", name+".txt")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./scenarios -update to create it)", err)
	}
	if string(want) != text {
		t.Errorf("error text differs from %s:\n got:\n%s\nwant:\n%s", path, text, want)
	}
}
