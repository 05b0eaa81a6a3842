package mpi

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/rdmabench/rdmabench/runner/backend"
	"github.com/rdmabench/rdmabench/runner/backend/local"
	"github.com/rdmabench/rdmabench/runner/endpoint"
)

func TestKeysParse(t *testing.T) {
	k, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(k.Private)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(k.Public)
	if err != nil || string(pub.Marshal()) != string(signer.PublicKey().Marshal()) || pub.Type() != "ssh-ed25519" {
		t.Fatalf("public key %v does not match the private one (%v)", pub, err)
	}
	if _, err := ssh.ParsePrivateKey(k.HostPrivate); err != nil {
		t.Fatal(err)
	}
}

func TestSSHDConfig(t *testing.T) {
	c := Config{Dir: "/tmp/rdmabench-r1/ssh", Port: 2222, Marker: "RDMABENCH_MPI=r1"}
	got := SSHDConfig(c, "10.245.0.7")
	for _, want := range []string{"Port 2222\n", "ListenAddress 10.245.0.7\n", "HostKey /tmp/rdmabench-r1/ssh/host_ed25519\n",
		"AuthorizedKeysFile /tmp/rdmabench-r1/ssh/authorized_keys\n", "PidFile /tmp/rdmabench-r1/ssh/sshd.pid\n",
		"PasswordAuthentication no\n", "SetEnv RDMABENCH_MPI=r1\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("sshd_config lacks %q:\n%s", want, got)
		}
	}
	for _, script := range []string{WriteScript(c), StartScript(c), StopScript(c)} {
		if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
			t.Errorf("sh -n: %v %s\n%s", err, out, script)
		}
	}
	if w := WriteScript(c); !strings.Contains(w, "umask 077") || !strings.Contains(w, "chmod 700 '/tmp/rdmabench-r1/ssh'") {
		t.Errorf("write script: %s", w)
	}
}

// WriteScript splits its stdin into the two keys, whichever POSIX shell
// runs it: SecretsStdin's form, a last block without its newline (read
// leaves a last line without one out of the loop), and a stdin without
// both blocks whole is refused rather than written as a broken host key.
func TestWriteScriptSplitsStdin(t *testing.T) {
	k, err := NewKeys()
	if err != nil {
		t.Fatal(err)
	}
	noNL := func(b []byte) []byte { return []byte(strings.TrimRight(string(b), "\n")) }
	crlf := func(b []byte) []byte { return []byte(strings.ReplaceAll(string(b), "\n", "\r\n")) }
	var shells [][]string
	for _, sh := range []string{"sh", "dash", "bash", "busybox"} {
		if _, err := exec.LookPath(sh); err == nil {
			shells = append(shells, map[bool][]string{true: {sh, "sh"}, false: {sh}}[sh == "busybox"])
		}
	}
	for _, sh := range shells {
		for _, c := range []struct {
			name  string
			stdin []byte
			ok    bool
		}{
			{"SecretsStdin", SecretsStdin(k), true},
			{"no last newline", append(append([]byte{}, k.Private...), noNL(k.HostPrivate)...), true},
			{"CRLF", SecretsStdin(Keys{Private: crlf(k.Private), HostPrivate: crlf(k.HostPrivate)}), true},
			{"one key", k.Private, false},
			{"host key cut", append(append([]byte{}, k.Private...), k.HostPrivate[:len(k.HostPrivate)/2]...), false},
		} {
			dir := filepath.Join(t.TempDir(), "ssh")
			argv := append(append([]string{}, sh...), "-c", WriteScript(Config{Dir: dir}), "sh", string(k.Public), "")
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Stdin = strings.NewReader(string(c.stdin))
			out, err := cmd.CombinedOutput()
			if !c.ok {
				if err == nil || !strings.Contains(string(out), "did not arrive whole") {
					t.Errorf("%s, %s: %v %s; want refused", sh[0], c.name, err, out)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s, %s: %v %s", sh[0], c.name, err, out)
				continue
			}
			for _, f := range []string{"id_ed25519", "host_ed25519"} {
				data, _ := os.ReadFile(filepath.Join(dir, f))
				if _, err := ssh.ParsePrivateKey(data); err != nil {
					t.Errorf("%s, %s: %s: %v", sh[0], c.name, f, err)
				}
			}
		}
	}
}

// TestUpDownOverSSH makes the launch for real on this host: two endpoints
// on 127.0.0.1 and 127.0.0.2 (the second gets an sshd), a command through
// ssh with the run's key that leaves a process behind, then Down: the
// process, sshd and the folder are gone.
func TestUpDownOverSSH(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("no sshd (apt-get install openssh-server)")
	}
	if os.Getuid() != 0 {
		t.Skip("sshd's privilege separation needs root")
	}
	run := "t" + strings.ReplaceAll(time.Now().Format("150405.000"), ".", "")
	cfg := Config{Dir: filepath.Join("/tmp", "rdmabench-"+run, "ssh"), Port: 22000 + os.Getpid()%2000, Marker: "RDMABENCH_MPI=" + run}
	b := &recordingBackend{Backend: local.New()}
	eps := []endpoint.Endpoint{{Name: "a-0", Address: "127.0.0.1"}, {Name: "b-0", Address: "127.0.0.2"}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := Up(ctx, b, cfg, eps)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Down(context.Background()) }()
	st, err := os.Stat(filepath.Join(cfg.Dir, "id_ed25519"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	if dst, _ := os.Stat(cfg.Dir); dst.Mode().Perm() != 0o700 {
		t.Errorf("folder mode %v", dst.Mode())
	}
	// The private keys came on stdin: no command line carried one, and
	// what was written is a whole key matching the public one.
	for _, argv := range b.argvs {
		if strings.Contains(strings.Join(argv, " "), "PRIVATE KEY") {
			t.Errorf("a private key travelled in argv: %.120q", strings.Join(argv, " "))
		}
	}
	for _, f := range []string{"id_ed25519", "host_ed25519"} {
		data, err := os.ReadFile(filepath.Join(cfg.Dir, f))
		if err != nil {
			t.Fatal(err)
		}
		signer, err := ssh.ParsePrivateKey(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if f == "id_ed25519" {
			pub, _ := os.ReadFile(filepath.Join(cfg.Dir, "id_ed25519.pub"))
			if strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))) != strings.TrimSpace(string(pub)) {
				t.Errorf("id_ed25519 does not match id_ed25519.pub")
			}
		}
	}
	args := strings.Fields("-i " + cfg.Dir + "/id_ed25519 -p " + strconv.Itoa(cfg.Port) + " -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR")
	var out []byte
	for i := 0; i < 20; i++ { // sshd writes its pid file just after it listens
		out, err = exec.CommandContext(ctx, "ssh", append(args, "127.0.0.2", "echo $RDMABENCH_MPI; (sleep 300 </dev/null >/dev/null 2>&1 &)")...).CombinedOutput()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || strings.TrimSpace(string(out)) != run {
		t.Fatalf("ssh: %v %q", err, out)
	}
	if n := marked(t, cfg.Marker); n == 0 {
		t.Fatal("the sleep started through ssh carries no marker")
	}
	if err := s.Down(ctx); err != nil {
		t.Fatal(err)
	}
	if n := marked(t, cfg.Marker); n != 0 {
		t.Errorf("%d marked processes left", n)
	}
	if _, err := os.Stat(filepath.Dir(cfg.Dir) + "/ssh"); !os.IsNotExist(err) {
		t.Errorf("folder left: %v", err)
	}
	if exec.Command("ssh", append(args, "127.0.0.2", "true")...).Run() == nil {
		t.Error("sshd still answers")
	}
	os.Remove(filepath.Dir(cfg.Dir))
}

// marked counts the processes whose environment holds marker.
func marked(t *testing.T, marker string) int {
	t.Helper()
	files, _ := filepath.Glob("/proc/[0-9]*/environ")
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if kv == marker {
				n++
				break
			}
		}
	}
	return n
}

// recordingBackend records the command lines a backend is given.
type recordingBackend struct {
	*local.Backend
	mu    sync.Mutex
	argvs [][]string
}

func (r *recordingBackend) record(argv []string) {
	r.mu.Lock()
	r.argvs = append(r.argvs, argv)
	r.mu.Unlock()
}

func (r *recordingBackend) Exec(ctx context.Context, ep endpoint.Endpoint, argv []string) ([]byte, error) {
	r.record(argv)
	return r.Backend.Exec(ctx, ep, argv)
}

func (r *recordingBackend) ExecStdin(ctx context.Context, ep endpoint.Endpoint, argv []string, stdin []byte) ([]byte, error) {
	r.record(argv)
	return r.Backend.ExecStdin(ctx, ep, argv, stdin)
}

func (r *recordingBackend) Start(ctx context.Context, ep endpoint.Endpoint, cmd backend.Command) (backend.Process, error) {
	r.record(cmd.Argv)
	return r.Backend.Start(ctx, ep, cmd)
}
