package testenv

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes a kubeconfig with one cluster and one context (and
// user) per token, named after the map keys.
func writeKubeconfig(path, clusterName, server string, caData []byte, insecure bool, tokens map[string]string, current string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[clusterName] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: caData,
		InsecureSkipTLSVerify:    insecure,
	}
	for name, token := range tokens {
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: name}
	}
	cfg.CurrentContext = current
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return err
	}
	// The binary runs as the pod's user (Pod): it may read the kubeconfig
	// of a throw-away cluster on 127.0.0.1, and nothing else of its dir.
	if err := os.Chmod(path, 0o644); err != nil {
		return err
	}
	return addMode(filepath.Dir(path), 0o111)
}

// UnreachableKubeconfig writes dir/unreachable.kubeconfig, whose only context
// ("unreachable", current) points at https://127.0.0.1:<port> where <port>
// was just bound and closed, so connections are refused immediately. The
// port is never handed to a cluster started by this process.
func UnreachableKubeconfig(dir string) (string, error) {
	var port int
	for tries := 0; ; tries++ {
		ports, err := freePorts(1)
		if err != nil {
			return "", err
		}
		port = ports[0]
		conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err != nil {
			break // refused: good
		}
		conn.Close()
		if tries == 10 {
			return "", fmt.Errorf("testenv: could not find a closed loopback port")
		}
	}
	path := filepath.Join(dir, "unreachable.kubeconfig")
	server := "https://127.0.0.1:" + strconv.Itoa(port)
	if err := writeKubeconfig(path, "unreachable", server, nil, true, map[string]string{"unreachable": "unreachable-token"}, "unreachable"); err != nil {
		return "", err
	}
	return path, nil
}
