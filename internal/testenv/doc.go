// Package testenv starts real, throw-away Kubernetes control planes (etcd plus
// kube-apiserver, no controllers, no nodes) for reclaim's end-to-end tests.
//
// The binaries are built from the Go module proxy by internal/testenv/testbins/build.sh
// into <repo>/.cache/testbins (or $RECLAIM_TESTBINS); Binaries builds them on
// first use. Every cluster listens on 127.0.0.1 only, keeps its data, certs
// and logs in its own temporary directory (Cluster.Dir) and is killed when the
// test process dies (Linux: PR_SET_PDEATHSIG).
//
// What is deliberately missing, because no kube-controller-manager runs:
// namespaces are never finalized (deleting one leaves it Terminating), the
// garbage collector does not cascade owner references, no default service
// account or token is created (the ServiceAccount admission plugin is
// disabled so pods can still be created), and pods stay Pending. A test that
// needs owner references cascaded starts a garbage collector of its own for
// as long as it runs (Cluster.StartGarbageCollector: a kube-controller-manager
// with only that controller, built on first use by build.sh
// kube-controller-manager).
//
// Set RECLAIM_TESTENV_KEEP=1 to keep Cluster.Dir (logs, certs, kubeconfig)
// after Stop.
package testenv
