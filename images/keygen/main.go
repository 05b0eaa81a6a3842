// Command keygen writes an ed25519 key pair for the soft-RoCE test VMs:
// FILE (OpenSSH private key, what rdmabench's ssh backend reads) and
// FILE.pub (the authorized_keys line baked into the VM image). It exists so
// the image build needs no ssh-keygen on the machine.
package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"fmt"
	"os"

	"golang.org/x/crypto/ssh"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "keygen:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: keygen FILE")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	block, err := ssh.MarshalPrivateKey(priv, "rdmabench softroce")
	if err != nil {
		return err
	}
	spub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return err
	}
	if err := os.WriteFile(args[0], pem.EncodeToMemory(block), 0o600); err != nil {
		return err
	}
	return os.WriteFile(args[0]+".pub", ssh.MarshalAuthorizedKey(spub), 0o644)
}
