package agent

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A hostNetwork pod has no namespace of its own (PodNet.NetNS is ""): its
// processes are found by process group instead. Every container process
// and exec'd command starts a group of its own; a daemon that calls
// setsid leaves its group and is not found (a limit of host networking
// here, not of namespaced pods).

func (p *pod) groups() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]int, 0, len(p.pgids))
	for g := range p.pgids {
		out = append(out, g)
	}
	return out
}

// pidsInGroups lists the live processes of the given process groups.
func pidsInGroups(pgids []int) []int {
	if len(pgids) == 0 {
		return nil
	}
	want := map[int]bool{}
	for _, g := range pgids {
		want[g] = true
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so cut at ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); want[g] {
			out = append(out, pid)
		}
	}
	return out
}

// killGroups ends the pod's process groups: SIGTERM, grace, SIGKILL.
func killGroups(pgids []int, grace time.Duration) error {
	signal := func(sig syscall.Signal) int {
		pids := pidsInGroups(pgids)
		for _, g := range pgids {
			_ = syscall.Kill(-g, sig)
		}
		return len(pids)
	}
	if signal(syscall.SIGTERM) > 0 && grace > 0 {
		deadline := time.Now().Add(grace)
		for time.Now().Before(deadline) && len(pidsInGroups(pgids)) > 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for signal(syscall.SIGKILL) > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("process groups %v survived SIGKILL", pgids)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// podPids lists the pod's live processes, by namespace or by group.
func (p *pod) podPids(pn *PodNet) []int {
	if pn.NetNS == "" {
		return pidsInGroups(p.groups())
	}
	pids, _ := PidsInNetNS(pn.NetNS)
	return pids
}

// kill ends every process of the pod, waiting up to grace after SIGTERM.
func (p *pod) kill(pn *PodNet, grace time.Duration) error {
	if p.agent.opts.Remote != nil {
		// The processes on the machine first: ending the local shells
		// (ssh) does not end what they started there.
		err := p.killRemote(grace)
		if lerr := killGroups(p.groups(), 0); err == nil {
			err = lerr
		}
		return err
	}
	if pn.NetNS == "" {
		return killGroups(p.groups(), grace)
	}
	return KillNetNS(pn.NetNS, grace)
}
