package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Users of the token file: each control-plane client has its own token
// (all in system:masters: this is a test cluster, not an RBAC exercise).
var users = []string{"admin", "system:kube-scheduler", "system:kube-controller-manager", "system:node-agent"}

func (c *Cluster) pkiPath(name string) string { return filepath.Join(c.WorkDir, "pki", name) }

// writeCredentials generates the CA, the apiserver's serving and
// kubelet-client certificates, the service-account keys and the tokens.
func (c *Cluster) writeCredentials(context.Context) error {
	p, err := newPKI()
	if err != nil {
		return err
	}
	c.pki = p
	if err := p.writeFiles(filepath.Join(c.WorkDir, "pki")); err != nil {
		return err
	}
	crt, key, err := p.issueFor("kube-apiserver", true, c.opts.APIServerIPs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.pkiPath("apiserver.crt"), crt, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(c.pkiPath("apiserver.key"), key, 0o600); err != nil {
		return err
	}
	c.tokens = map[string]string{}
	var lines []string
	for _, u := range users {
		c.tokens[u] = randomToken()
		lines = append(lines, fmt.Sprintf("%s,%s,%s,system:masters", c.tokens[u], u, u))
	}
	// Joined kubelets are nodes, not masters: the Node authorizer and
	// NodeRestriction admission bound what each may touch.
	for _, n := range c.opts.JoinNodes {
		u := nodeUser(n.Name)
		c.tokens[u] = randomToken()
		lines = append(lines, fmt.Sprintf("%s,%s,%s,system:nodes", c.tokens[u], u, u))
	}
	return os.WriteFile(c.pkiPath("tokens.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", port)
	c.APIServerPort = port
	var egress []string
	if len(c.opts.JoinNodes) > 0 {
		p, cfg, err := startEgressProxy(filepath.Join(c.WorkDir, "egress.sock"), c.opts.egressRoutes())
		if err != nil {
			return fmt.Errorf("egress proxy: %w", err)
		}
		c.egress = p
		egress = []string{"--egress-selector-config-file=" + cfg}
	}
	c.apiserver = &process{
		name: "kube-apiserver",
		path: filepath.Join(c.opts.BinDir, "kube-apiserver"),
		log:  filepath.Join(c.WorkDir, "logs", "kube-apiserver.log"),
		args: append([]string{
			"--etcd-servers=" + c.etcd.URL,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(c.WorkDir, "pki"),
			"--tls-cert-file=" + c.pkiPath("apiserver.crt"),
			"--tls-private-key-file=" + c.pkiPath("apiserver.key"),
			"--client-ca-file=" + c.pkiPath("ca.crt"),
			"--token-auth-file=" + c.pkiPath("tokens.csv"),
			"--authorization-mode=Node,RBAC",
			"--enable-admission-plugins=NodeRestriction",
			"--service-cluster-ip-range=10.96.0.0/16",
			"--allow-privileged=true",
			"--service-account-issuer=https://localhost",
			"--service-account-key-file=" + c.pkiPath("sa.pub"),
			"--service-account-signing-key-file=" + c.pkiPath("sa.key"),
			// No service-account token controller, and no node lifecycle
			// controller to lift the not-ready taint TaintNodesByCondition adds.
			"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
			"--kubelet-certificate-authority=" + c.pkiPath("ca.crt"),
			"--kubelet-client-certificate=" + c.pkiPath("kubelet-client.crt"),
			"--kubelet-client-key=" + c.pkiPath("kubelet-client.key"),
			"--kubelet-preferred-address-types=InternalIP",
			"--endpoint-reconciler-type=none",
			"--enable-priority-and-fairness=false",
			"--profiling=false",
		}, egress...),
	}
	if err := c.apiserver.start(); err != nil {
		return err
	}
	if err := c.waitHealthy(ctx, c.apiserver, c.Server+"/readyz", c.caPool(), c.tokens["admin"]); err != nil {
		return err
	}
	for _, u := range users {
		if err := c.writeKubeconfig(c.kubeconfigFor(u), u); err != nil {
			return err
		}
	}
	if err := c.writeKubeconfig(c.Kubeconfig, "admin"); err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(c.restConfig("admin"))
	if err != nil {
		return err
	}
	c.client = cs
	return nil
}

// apiserverGrace is how long kube-apiserver gets after SIGTERM before
// SIGKILL: its graceful shutdown waits for open watches (over 10s here), an
// unhelpful pause in a test.
const apiserverGrace = 3 * time.Second

// RestartAPIServer stops kube-apiserver (SIGTERM, then SIGKILL after 3s)
// and starts it again on the same port with the same flags, returning once
// it is ready: the "apiserver restarted mid-run" case.
func (c *Cluster) RestartAPIServer(ctx context.Context) error {
	if err := c.apiserver.stop(apiserverGrace); err != nil {
		return err
	}
	if err := c.apiserver.start(); err != nil {
		return err
	}
	return c.waitHealthy(ctx, c.apiserver, c.Server+"/readyz", c.caPool(), c.tokens["admin"])
}

// StopAPIServer stops kube-apiserver until StartAPIServer; for tests of
// an API that is away for a while.
func (c *Cluster) StopAPIServer() error { return c.apiserver.stop(apiserverGrace) }

// StartAPIServer starts a stopped kube-apiserver again and waits until it
// is ready.
func (c *Cluster) StartAPIServer(ctx context.Context) error {
	if !c.apiserver.exited() {
		return nil
	}
	if err := c.apiserver.start(); err != nil {
		return err
	}
	return c.waitHealthy(ctx, c.apiserver, c.Server+"/readyz", c.caPool(), c.tokens["admin"])
}

func (c *Cluster) kubeconfigFor(user string) string {
	return filepath.Join(c.WorkDir, "kubeconfig-"+strings.ReplaceAll(user, ":", "-"))
}

func (c *Cluster) startControllers(ctx context.Context) error {
	for _, name := range []string{"kube-scheduler", "kube-controller-manager"} {
		port, err := freePort()
		if err != nil {
			return err
		}
		kc := c.kubeconfigFor("system:" + name)
		args := []string{
			"--kubeconfig=" + kc, "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
			"--leader-elect=false", "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		}
		if name == "kube-controller-manager" {
			args = append(args,
				"--controllers=garbagecollector,namespace,replicaset,deployment,job,statefulset,serviceaccount,resourceclaim-controller",
				"--cert-dir="+filepath.Join(c.WorkDir, "pki", "kcm"))
		}
		p := &process{name: name, path: filepath.Join(c.opts.BinDir, name), args: args,
			log: filepath.Join(c.WorkDir, "logs", name+".log")}
		if err := p.start(); err != nil {
			return err
		}
		if name == "kube-scheduler" {
			c.scheduler = p
		} else {
			c.ctrlmgr = p
		}
		if err := c.waitHealthy(ctx, p, fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil, ""); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) caPool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(c.pki.cert)
	return pool
}

// waitHealthy polls url until it answers 200, the process exits, or
// StartTimeout passes. A nil pool skips verification (the scheduler's and
// controller-manager's self-signed serving certificates).
func (c *Cluster) waitHealthy(ctx context.Context, p *process, url string, pool *x509.CertPool, token string) error {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, InsecureSkipVerify: pool == nil}}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	deadline := time.Now().Add(c.opts.StartTimeout)
	var last string
	for time.Now().Before(deadline) {
		if p.exited() {
			return fmt.Errorf("%s exited while starting\n%s", p.name, p.tail())
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s not healthy at %s within %s (last: %s)\n%s", p.name, url, c.opts.StartTimeout, last, p.tail())
}

// restConfig is a client configuration for one of the token file's users,
// with rate limits high enough for a 64-pod benchmark.
func (c *Cluster) restConfig(user string) *rest.Config {
	return &rest.Config{
		Host:            c.Server,
		BearerToken:     c.tokens[user],
		TLSClientConfig: rest.TLSClientConfig{CAData: c.pki.certPEM},
		QPS:             500,
		Burst:           1000,
		UserAgent:       "rdmabench-kubecluster/" + user,
	}
}

func (c *Cluster) writeKubeconfig(path, user string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["rdmabench-test"] = &clientcmdapi.Cluster{Server: c.Server, CertificateAuthorityData: c.pki.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: c.tokens[user]}
	cfg.Contexts["rdmabench-test"] = &clientcmdapi.Context{Cluster: "rdmabench-test", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "rdmabench-test"
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return clientcmd.WriteToFile(*cfg, path)
}
