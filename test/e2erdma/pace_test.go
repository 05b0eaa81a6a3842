package e2erdma

import (
	"testing"
	"time"
)

func TestPace(t *testing.T) {
	boot := PaceOf("VMs booted", 30*time.Second, 15*time.Second)
	if boot.Factor != 2 || boot.String() != "×2.00 (VMs booted 30.0s (reference 15.0s: ×2.00))" {
		t.Errorf("boot pace %+v %q", boot, boot)
	}
	fast := PaceOf("image import (180 MB)", 72*time.Second, 144*time.Second)
	if fast.Factor != 1 || fast.Scale(4*time.Minute) != 4*time.Minute {
		t.Errorf("a faster host: %+v scales 4m to %s; want ×1 and 4m (never below the reference bounds)", fast, fast.Scale(4*time.Minute))
	}
	both := fast.Slower(boot)
	if both.Factor != 2 || both.Basis != "image import (180 MB) 72.0s (reference 144.0s: ×0.50); VMs booted 30.0s (reference 15.0s: ×2.00)" {
		t.Errorf("slower of both: %+v", both)
	}
	if got := both.Scale(2*time.Minute + 30*time.Second); got != 5*time.Minute {
		t.Errorf("2m30s at ×2: %s", got)
	}
}

func TestBudget(t *testing.T) {
	now := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                string
		want, reserve, need time.Duration
		deadline            time.Time
		has                 bool
		got                 time.Duration
		ok                  bool
	}{
		{"no -timeout", 10 * time.Minute, 5 * time.Minute, time.Minute, time.Time{}, false, 10 * time.Minute, true},
		{"room", 10 * time.Minute, 5 * time.Minute, time.Minute, now.Add(30 * time.Minute), true, 10 * time.Minute, true},
		{"cut", 10 * time.Minute, 5 * time.Minute, time.Minute, now.Add(12 * time.Minute), true, 7 * time.Minute, true},
		{"too little", 10 * time.Minute, 5 * time.Minute, 3 * time.Minute, now.Add(7 * time.Minute), true, 2 * time.Minute, false},
		{"past", 10 * time.Minute, 5 * time.Minute, time.Minute, now.Add(time.Minute), true, 0, false},
	} {
		got, ok := Budget(tc.want, tc.reserve, tc.need, tc.deadline, tc.has, now)
		if got != tc.got || ok != tc.ok {
			t.Errorf("%s: %s %v; want %s %v", tc.name, got, ok, tc.got, tc.ok)
		}
	}
}

func TestImportTime(t *testing.T) {
	out := "join: 9s containerd 1.6.20~ds1-1+deb12u3 up\njoin: 21s kubelet (Kubernetes v1.35.0) and rdmaplugin (eth0) started\n" +
		"join: 167s images imported: localhost/rdmabench/tools:lane localhost/rdmabench/tools:no-rping \n"
	if d, ok := importTime(out); !ok || d != 146*time.Second {
		t.Errorf("import %s %v; want 146s", d, ok)
	}
	if _, ok := importTime("join: 9s containerd up\njoin: 21s kubelet started\n"); ok {
		t.Errorf("an import time from a join that imported nothing")
	}
}
