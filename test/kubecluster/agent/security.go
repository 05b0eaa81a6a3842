package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// runtimeDefaultCapabilities are what a container runtime gives a
// container that asks for nothing (containerd's and Docker's default set);
// a container's securityContext drops from and adds to it.
var runtimeDefaultCapabilities = []string{"CHOWN", "DAC_OVERRIDE", "FSETID", "FOWNER", "MKNOD", "NET_RAW", "SETGID",
	"SETUID", "SETFCAP", "SETPCAP", "NET_BIND_SERVICE", "SYS_CHROOT", "KILL", "AUDIT_WRITE"}

// capabilities are the container's capability set as a runtime computes
// it: every capability when privileged (nil), else the default set less
// securityContext.capabilities.drop (ALL drops every one), plus add.
func capabilities(sc *corev1.SecurityContext) []string {
	if sc != nil && sc.Privileged != nil && *sc.Privileged {
		return nil
	}
	caps := slices.Clone(runtimeDefaultCapabilities)
	if sc == nil || sc.Capabilities == nil {
		return caps
	}
	for _, d := range sc.Capabilities.Drop {
		name := strings.TrimPrefix(strings.ToUpper(string(d)), "CAP_")
		if name == "ALL" {
			caps = []string{}
			break
		}
		caps = slices.DeleteFunc(caps, func(c string) bool { return c == name })
	}
	for _, a := range sc.Capabilities.Add {
		name := strings.TrimPrefix(strings.ToUpper(string(a)), "CAP_")
		if !slices.Contains(caps, name) {
			caps = append(caps, name)
		}
	}
	return caps
}

// restrict is the setpriv line that gives a process of container c what
// its securityContext (and the pod's) allow, as a runtime would: the
// capability bounding set (which, for root, is every capability it has
// after exec), no_new_privs when privilege escalation is off, and the
// user and group. setpriv comes from util-linux (in the image's root, or
// the host's). nil for a privileged container that sets no user.
func (p *pod) restrict(c *container, root string) []string {
	sc := c.spec.SecurityContext
	psc := p.spec.Spec.SecurityContext
	caps := capabilities(sc)
	uid, gid := runAs(sc, psc)
	noNewPrivs := sc != nil && sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation
	if caps == nil && uid == nil && !noNewPrivs {
		return nil
	}
	args := []string{setprivPath(root)}
	if caps != nil {
		set := "-all"
		for _, c := range caps {
			set += ",+" + strings.ToLower(c)
		}
		args = append(args, "--bounding-set="+set, "--inh-caps=-all")
	}
	if noNewPrivs {
		args = append(args, "--no-new-privs")
	}
	if uid != nil {
		args = append(args, "--reuid="+strconv.FormatInt(*uid, 10), "--clear-groups")
		g := int64(0)
		if gid != nil {
			g = *gid
		}
		args = append(args, "--regid="+strconv.FormatInt(g, 10))
	}
	return append(args, "--")
}

// runAs is the user and group a container runs as: its own securityContext,
// else the pod's; nil when neither says (the image's user, root here).
func runAs(sc *corev1.SecurityContext, psc *corev1.PodSecurityContext) (uid, gid *int64) {
	if psc != nil {
		uid, gid = psc.RunAsUser, psc.RunAsGroup
	}
	if sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	return uid, gid
}

// setprivPath is setpriv inside root ("" for the host's file system).
func setprivPath(root string) string {
	for _, p := range []string{"/usr/bin/setpriv", "/bin/setpriv"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			return p
		}
	}
	return "setpriv" // looked up on PATH; a missing one fails the container with its name
}
