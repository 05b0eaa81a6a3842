package ssh

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/rdmabench/rdmabench/scenarios"
)

func clientConfig(h scenarios.Host, o Options) (*ssh.ClientConfig, error) {
	auth, err := authMethods(h)
	if err != nil {
		return nil, err
	}
	hk, algos, err := hostKeyCheck(h, o)
	if err != nil {
		return nil, err
	}
	return &ssh.ClientConfig{
		User:              userOf(h, o),
		Auth:              auth,
		HostKeyCallback:   hk,
		HostKeyAlgorithms: algos,
		Timeout:           o.DialTimeout,
	}, nil
}

func userOf(h scenarios.Host, o Options) string {
	if h.User != "" {
		return h.User
	}
	if o.DefaultUser != "" {
		return o.DefaultUser
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// authMethods: the host's key file, else the ssh agent and the usual
// ~/.ssh/id_* keys.
func authMethods(h scenarios.Host) ([]ssh.AuthMethod, error) {
	var signers []ssh.Signer
	if h.KeyFile != "" {
		s, err := readKey(expand(h.KeyFile))
		if errors.Is(err, os.ErrNotExist) {
			wd, _ := os.Getwd()
			return nil, fmt.Errorf("host %s: keyFile %s does not exist (read relative to %s); fix hosts[].keyFile, or leave it unset to use ssh-agent and ~/.ssh/id_*", h.Name, h.KeyFile, wd)
		}
		if err != nil {
			return nil, err
		}
		signers = append(signers, s)
	} else {
		home, _ := os.UserHomeDir()
		for _, n := range []string{"id_ed25519", "id_ecdsa", "id_rsa"} {
			if s, err := readKey(filepath.Join(home, ".ssh", n)); err == nil {
				signers = append(signers, s)
			}
		}
	}
	methods := []ssh.AuthMethod{}
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" && h.KeyFile == "" {
		if c, err := net.Dial("unix", sock); err == nil {
			methods = append(methods, ssh.PublicKeysCallback(agent.NewClient(c).Signers))
		}
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("no credentials: set keyFile for host %s, or load a key into ssh-agent (SSH_AUTH_SOCK)", h.Name)
	}
	return methods, nil
}

func readKey(path string) (ssh.Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	s, err := ssh.ParsePrivateKey(b)
	var pp *ssh.PassphraseMissingError
	if errors.As(err, &pp) {
		return nil, fmt.Errorf("key file %s is protected by a passphrase: load it into ssh-agent (ssh-add %s) and leave keyFile unset", path, path)
	}
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return s, nil
}

func expand(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// hostKeyCheck returns the known_hosts callback (on by default) and the
// host key algorithms known for the host, so the server offers the key
// type that known_hosts holds.
func hostKeyCheck(h scenarios.Host, o Options) (ssh.HostKeyCallback, []string, error) {
	if h.InsecureIgnoreHostKey {
		return ssh.InsecureIgnoreHostKey(), nil, nil
	}
	file := h.KnownHostsFile
	if file == "" {
		file = o.KnownHostsFile
	}
	if file == "" {
		home, _ := os.UserHomeDir()
		file = filepath.Join(home, ".ssh", "known_hosts")
	}
	file = expand(file)
	cb, err := knownhosts.New(file)
	if err != nil {
		return nil, nil, fmt.Errorf("known hosts file: %w (create it with `ssh-keyscan -p %d %s >> %s`, or set knownHostsFile for host %s)", err, portOf(h), addrOnly(h), file, h.Name)
	}
	check := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := cb(hostname, remote, key)
		if err == nil {
			return nil
		}
		return explainHostKey(h, file, key, err)
	}
	return check, knownAlgorithms(cb, h), nil
}

// knownAlgorithms asks the callback which key types it holds for the host
// (a probe with an impossible key returns them in the KeyError).
func knownAlgorithms(cb ssh.HostKeyCallback, h scenarios.Host) []string {
	addr := sshAddress(h)
	err := cb(addr, &net.TCPAddr{IP: net.ParseIP(addrOnly(h)), Port: portOf(h)}, probeKey{})
	var ke *knownhosts.KeyError
	if !errors.As(err, &ke) {
		return nil
	}
	var algos []string
	for _, k := range ke.Want {
		if t := k.Key.Type(); t == ssh.KeyAlgoRSA {
			algos = append(algos, ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, t)
		} else {
			algos = append(algos, t)
		}
	}
	return algos
}

// explainHostKey turns a known_hosts failure into a message that says
// which host, which key, and how to fix it.
func explainHostKey(h scenarios.Host, file string, key ssh.PublicKey, err error) error {
	got := key.Type() + " " + ssh.FingerprintSHA256(key)
	var ke *knownhosts.KeyError
	if errors.As(err, &ke) && len(ke.Want) > 0 {
		w := ke.Want[0]
		return fmt.Errorf("HOST KEY MISMATCH for host %s (%s): it offered %s but %s:%d expects %s %s. "+
			"If the host was reinstalled, remove the old entry with `ssh-keygen -R %s -f %s` and add the new key; otherwise someone may be intercepting the connection, and the run was refused",
			h.Name, sshAddress(h), got, w.Filename, w.Line, w.Key.Type(), ssh.FingerprintSHA256(w.Key),
			knownhosts.Normalize(sshAddress(h)), file)
	}
	if errors.As(err, &ke) {
		return fmt.Errorf("host %s (%s) is not in %s: it offered %s. Check the key and add it with `ssh-keyscan -p %d %s >> %s`",
			h.Name, sshAddress(h), file, got, portOf(h), addrOnly(h), file)
	}
	var re *knownhosts.RevokedError
	if errors.As(err, &re) {
		return fmt.Errorf("host %s (%s) offered %s, which %s:%d marks as revoked; refused", h.Name, sshAddress(h), got, re.Revoked.Filename, re.Revoked.Line)
	}
	return fmt.Errorf("host %s (%s): host key check: %w", h.Name, sshAddress(h), err)
}

func portOf(h scenarios.Host) int {
	if h.Port != 0 {
		return h.Port
	}
	return 22
}

func addrOnly(h scenarios.Host) string {
	if host, _, err := net.SplitHostPort(h.Address); err == nil {
		return host
	}
	return h.Address
}

// probeKey is a key no known_hosts line can match.
type probeKey struct{}

func (probeKey) Type() string                        { return "rdmabench-probe" }
func (probeKey) Marshal() []byte                     { return []byte("rdmabench-probe") }
func (probeKey) Verify([]byte, *ssh.Signature) error { return errors.New("probe") }
