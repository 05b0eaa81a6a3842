package cluster

import (
	"fmt"
	"net"
	"strconv"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// JoinNode is a machine that joins the cluster with a kubelet of its own
// (the soft-RoCE VMs as real nodes): the cluster makes its credentials and
// routes the apiserver's connections to its kubelet.
type JoinNode struct {
	// Name is the node's name (the kubelet's --hostname-override).
	Name string
	// IP is the address the kubelet reports as InternalIP (--node-ip),
	// which its serving certificate is made for.
	IP net.IP
	// KubeletAddr is where this host reaches that kubelet's port 10250
	// (a QEMU port forward, 127.0.0.1:42251).
	KubeletAddr string
}

// KubeletPort is the port the joined kubelets serve on (the default).
const KubeletPort = 10250

// nodeUser is the identity the Node authorizer and NodeRestriction
// admission expect of a kubelet.
func nodeUser(name string) string { return "system:node:" + name }

// egressRoutes maps each joined kubelet's reported address to KubeletAddr.
func (o *Options) egressRoutes() map[string]string {
	routes := map[string]string{}
	for _, n := range o.JoinNodes {
		routes[net.JoinHostPort(n.IP.String(), strconv.Itoa(KubeletPort))] = n.KubeletAddr
	}
	return routes
}

// JoinFiles are what a joining machine's kubelet needs, by file name: a
// kubeconfig with the node's token for server (the apiserver's URL as the
// machine reaches it, e.g. https://10.0.2.2:PORT from a QEMU guest; its
// address must be one of Options.APIServerIPs), the cluster CA, and a
// serving certificate and key for the node's IP signed by that CA (the
// apiserver verifies kubelets with it).
func (c *Cluster) JoinFiles(name, server string) (map[string][]byte, error) {
	var node *JoinNode
	for i := range c.opts.JoinNodes {
		if c.opts.JoinNodes[i].Name == name {
			node = &c.opts.JoinNodes[i]
		}
	}
	if node == nil {
		return nil, fmt.Errorf("node %q is not in Options.JoinNodes", name)
	}
	user := nodeUser(name)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["rdmabench-test"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: c.pki.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: c.tokens[user]}
	cfg.Contexts["rdmabench-test"] = &clientcmdapi.Context{Cluster: "rdmabench-test", AuthInfo: user}
	cfg.CurrentContext = "rdmabench-test"
	kc, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, err
	}
	crt, key, err := c.pki.issueFor(name, true, []net.IP{node.IP})
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"kubeconfig": kc, "ca.crt": c.pki.certPEM, "kubelet.crt": crt, "kubelet.key": key}, nil
}
