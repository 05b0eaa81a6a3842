package scenarios

import "testing"

// The quick profile: one repetition, the ends of size lists and context
// lengths, sweeps from maxSize/16, durations capped; what it writes
// validates.
func TestQuick(t *testing.T) {
	for _, name := range ShippedNames() {
		s, ok := ShippedScenario(name)
		if !ok {
			t.Fatal(name)
		}
		sc, err := LoadBytes(name+".yaml", s.Data)
		if err != nil {
			t.Fatal(err)
		}
		Quick(sc)
		if err := Validate(sc); err != nil {
			t.Errorf("%s: the quick profile does not validate: %v", name, err)
		}
		for _, tc := range sc.Tests {
			a := tc.Args
			if *tc.Repetitions != 1 || len(a.Sizes) > 2 {
				t.Errorf("%s/%s: repetitions %d, sizes %v", name, tc.Name, *tc.Repetitions, a.Sizes)
			}
			if a.MaxSize.Bytes > 0 && a.MinSize.Bytes < a.MaxSize.Bytes/16 {
				t.Errorf("%s/%s: sweep from %d to %d", name, tc.Name, a.MinSize.Bytes, a.MaxSize.Bytes)
			}
			if a.Duration.IsSet() && a.Duration.Value.Seconds() > 3 {
				t.Errorf("%s/%s: duration %s", name, tc.Name, a.Duration.Raw)
			}
		}
		if sc.Serving != nil && len(sc.Serving.ContextLengths) > 2 {
			t.Errorf("%s: context lengths %v", name, sc.Serving.ContextLengths)
		}
	}
	a := Args{Sizes: []Size{{Raw: "4K", Bytes: 4096}, {Raw: "64K", Bytes: 65536}, {Raw: "1M", Bytes: 1 << 20}}, MinSize: Size{Raw: "4KiB"}, MaxSize: Size{Raw: "64MiB"}, Duration: Duration{Raw: "10s"}}
	quickArgs(&a)
	if len(a.Sizes) != 2 || a.Sizes[1].Bytes != 1<<20 || a.MinSize.Bytes != 4<<20 || a.MinSize.Raw != "4MiB" || a.Duration.Raw != "3s" {
		t.Fatalf("%+v", a)
	}
}
