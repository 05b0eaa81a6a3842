// Package mpi makes the ranks of one multi-host nccl-tests job reachable by
// Open MPI's ssh launcher, the way the MPI Operator does it in Kubernetes:
// a key pair made for the run, written into every rank's endpoint, and an
// sshd of the run's own on every rank but the launcher, listening on the
// rank's data address. It uses only a backend's Exec and ExecStdin (the
// private keys on stdin), so pods (kube), hosts (ssh) and local processes
// get the same launcher; the keys never go into an API object or argv.
package mpi

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

// Config is one job's ssh launch: where its files live on every endpoint,
// sshd's port, and the marker every process of the job carries.
type Config struct {
	// Dir is the per-run folder (/tmp/rdmabench-RUN/ssh), made 0700.
	Dir string
	// Port is the per-run sshd's port on every non-launcher rank.
	Port int
	// Marker is NAME=VALUE, set by sshd (SetEnv) on every session, so
	// clean-up finds orted and the ranks it started wherever they went.
	Marker string
}

// Keys is the run's key material, in OpenSSH formats.
type Keys struct {
	Private, Public, HostPrivate []byte
}

// NewKeys makes a client key pair and an sshd host key (ed25519).
func NewKeys() (Keys, error) {
	var k Keys
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return k, err
	}
	if k.Private, err = marshalPrivate(priv); err != nil {
		return k, err
	}
	sp, err := ssh.NewPublicKey(pub)
	if err != nil {
		return k, err
	}
	k.Public = ssh.MarshalAuthorizedKey(sp)
	_, hpriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return k, err
	}
	k.HostPrivate, err = marshalPrivate(hpriv)
	return k, err
}

func marshalPrivate(priv ed25519.PrivateKey) ([]byte, error) {
	block, err := ssh.MarshalPrivateKey(priv, "rdmabench mpi")
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(block), nil
}

// SSHDConfig is the per-run sshd's configuration: its own host key, the
// run's authorized_keys and pid file, one address and port, public keys
// only, and the marker on every session.
func SSHDConfig(c Config, listen string) string {
	lines := []string{
		"Port " + fmt.Sprint(c.Port),
		"ListenAddress " + listen,
		"HostKey " + c.Dir + "/host_ed25519",
		"AuthorizedKeysFile " + c.Dir + "/authorized_keys",
		"PidFile " + c.Dir + "/sshd.pid",
		"PermitRootLogin prohibit-password",
		"PubkeyAuthentication yes",
		"PasswordAuthentication no",
		"KbdInteractiveAuthentication no",
		"UsePAM no",
		// /tmp is world-writable: strict modes would refuse the keys in it.
		"StrictModes no",
		"AllowTcpForwarding no",
		"X11Forwarding no",
		"PrintMotd no",
		"UseDNS no",
		"SetEnv " + c.Marker,
	}
	return strings.Join(lines, "\n") + "\n"
}

// WriteScript writes the keys (and, with a listen address, the sshd
// config) into Dir: folder 0700, secrets 0600. The two private keys come
// on stdin (SecretsStdin), never as arguments; its arguments are $1 the
// public key and $2 the sshd config.
func WriteScript(c Config) string {
	d := shellQuote(c.Dir)
	return `set -e; umask 077; mkdir -p ` + d + `; chmod 700 ` + d + `; cd ` + d + `
: > id_ed25519; : > host_ed25519; f=id_ed25519; n=0
while IFS= read -r l || [ -n "$l" ]; do printf '%s\n' "$l" >> "$f"; case "$l" in "-----END "*) f=host_ed25519; n=$((n+1));; esac; done
[ "$n" = 2 ] || { echo "the private keys did not arrive whole on stdin ($n of 2 PEM blocks)" >&2; exit 1; }
printf '%s' "$1" > id_ed25519.pub; printf '%s' "$1" > authorized_keys; printf '%s' "$2" > sshd_config
chmod 600 id_ed25519 authorized_keys host_ed25519`
}

// SecretsStdin is WriteScript's stdin: the client's private key, then the
// host key, each a PEM block ending with its "-----END" line.
func SecretsStdin(k Keys) []byte {
	var b []byte
	for _, pem := range [][]byte{k.Private, k.HostPrivate} {
		b = append(b, pem...)
		if len(pem) > 0 && pem[len(pem)-1] != '\n' {
			b = append(b, '\n')
		}
	}
	return b
}

// StartScript starts sshd (it daemonises once it listens) with the config
// in Dir; sshd needs its absolute path and its privilege-separation folder.
func StartScript(c Config) string {
	d := shellQuote(c.Dir)
	return `set -e; SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || { echo "sshd not found (install openssh-server)" >&2; exit 127; }
mkdir -p /run/sshd 2>/dev/null || true
"$SSHD" -f ` + d + `/sshd_config -E ` + d + `/sshd.log || { cat ` + d + `/sshd.log >&2; exit 1; }`
}

// StopScript ends everything of the job on one endpoint and removes Dir:
// every process carrying the marker (orted, ranks, their shells), the
// sshd and whatever it still has running, then the folder. It prints what
// is left (nothing, normally).
func StopScript(c Config) string {
	d := shellQuote(c.Dir)
	m := shellQuote(c.Marker)
	return `D=` + d + `; M=` + m + `
marked() { for f in $(grep -lsxzF "$M" /proc/[0-9]*/environ 2>/dev/null); do f=${f#/proc/}; echo "${f%/environ}"; done; }
tree() { # $1 and its descendants, from one read of every /proc/PID/stat
  t=$(for p in /proc/[0-9]*; do read -r l < "$p/stat" 2>/dev/null || continue; set -- ${l##*) }; echo "${p#/proc/} $2"; done)
  w=" $1 "; c=1
  while [ $c = 1 ]; do c=0
    while read -r p pp; do case "$w" in *" $pp "*) case "$w" in *" $p "*) ;; *) w="$w$p "; c=1;; esac;; esac; done <<EOF
$t
EOF
  done; echo $w; }
pids=$(marked)
if [ -s "$D/sshd.pid" ]; then pids="$pids $(tree "$(cat "$D/sshd.pid")")"; fi
[ -n "$(echo $pids)" ] && kill -9 $pids 2>/dev/null
left=
for i in 1 2 3 4 5 6 7 8 9 10; do left=$(marked); [ -z "$left" ] && break; kill -9 $left 2>/dev/null; sleep 0.1; done
rm -rf "$D"
[ -z "$left" ] || echo "left: $left"`
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Session is the ssh launch of one job, up on its endpoints.
type Session struct {
	b       backend.Backend
	cfg     Config
	eps     []endpoint.Endpoint
	stopped sync.Once
}

// Up writes the keys into every rank's endpoint and starts sshd on every
// endpoint whose address differs from the launcher's (one per address:
// endpoints on one host share it). ranks[0] is the launcher. On an error
// what was done is undone.
func Up(ctx context.Context, b backend.Backend, cfg Config, ranks []endpoint.Endpoint) (*Session, error) {
	if len(ranks) == 0 {
		return nil, errors.New("mpi: no ranks")
	}
	execer, ok := b.(backend.StdinExecer)
	if !ok {
		return nil, fmt.Errorf("mpi: backend %T cannot feed a command's stdin, and the run's private keys never travel as arguments", b)
	}
	keys, err := NewKeys()
	if err != nil {
		return nil, fmt.Errorf("mpi: make the run's ssh keys: %w", err)
	}
	s := &Session{b: b, cfg: cfg}
	seen := map[string]bool{}
	for i, ep := range ranks {
		if seen[ep.Name] {
			continue
		}
		seen[ep.Name] = true
		s.eps = append(s.eps, ep)
		sshd := i > 0 && ep.Address != ranks[0].Address && !seen["addr\x00"+ep.Address]
		conf := ""
		if sshd {
			seen["addr\x00"+ep.Address] = true
			conf = SSHDConfig(cfg, ep.Address)
		}
		argv := []string{"sh", "-c", WriteScript(cfg), "sh", string(keys.Public), conf}
		if _, err := execer.ExecStdin(ctx, ep, argv, SecretsStdin(keys)); err != nil {
			_ = s.Down(context.WithoutCancel(ctx)) // the first error is the one to report
			return nil, fmt.Errorf("write the run's ssh keys on %s: %w", ep.Name, err)
		}
		if !sshd {
			continue
		}
		if out, err := b.Exec(ctx, ep, []string{"sh", "-c", StartScript(cfg)}); err != nil {
			_ = s.Down(context.WithoutCancel(ctx)) // the first error is the one to report
			return nil, fmt.Errorf("start sshd for the MPI launcher on %s (%s:%d): %w%s", ep.Name, ep.Address, cfg.Port, err, outText(out))
		}
	}
	return s, nil
}

func outText(b []byte) string {
	if t := strings.TrimSpace(string(b)); t != "" {
		return ": " + t
	}
	return ""
}

// Down kills the job's processes and sshd on every endpoint and removes
// the folder; bounded by ctx (give it a fresh one after Ctrl-C). Only the
// first call does anything.
func (s *Session) Down(ctx context.Context) error {
	var errs []error
	s.stopped.Do(func() {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, ep := range s.eps {
			wg.Add(1)
			go func(ep endpoint.Endpoint) {
				defer wg.Done()
				out, err := s.b.Exec(ctx, ep, []string{"sh", "-c", StopScript(s.cfg)})
				if err == nil && strings.Contains(string(out), "left:") {
					err = errors.New(strings.TrimSpace(string(out)))
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("stop the MPI launch on %s: %w", ep.Name, err))
					mu.Unlock()
				}
			}(ep)
		}
		wg.Wait()
	})
	return errors.Join(errs...)
}
