// Package kube collects, from one or more Kubernetes clusters, every reference
// to a GCE persistent disk (PersistentVolumes, inline pod volumes), what uses
// it (pods, Argo Workflows), and whether the cluster was listed completely.
// It converts Kubernetes objects into reclaim.dev/reclaim/inventory types and
// nothing else leaves this package.
package kube

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/transport"
	"reclaim.dev/reclaim/inventory"
)

// UserAgent is sent with every request so that apiserver audit logs name us.
const UserAgent = "reclaim"

// Target is one cluster to collect from.
type Target struct {
	// Name identifies the cluster in results and problems.
	Name string
	// Kubeconfig is a kubeconfig file; empty means the default loading rules
	// ($KUBECONFIG, then ~/.kube/config). Context picks a context in it; empty
	// means the file's current-context.
	Kubeconfig, Context string
	// InCluster uses the pod's service account instead of a kubeconfig.
	InCluster bool
	// Discovered: the cluster is reached only through Endpoint, CAData and
	// Token, never through a kubeconfig. Endpoint, CAData and Token: its API
	// server's URL, CA bundle (PEM) and a source of short-lived bearer
	// tokens minted in process (GKE OAuth2, EKS k8s-aws-v1). Nothing is
	// written to disk and no exec plugin runs.
	Discovered bool
	Endpoint   string
	CAData     []byte
	Token      oauth2.TokenSource
	// Projects limits which GCE projects this cluster's PVs can point at
	// (overrides Options.Projects when non-empty).
	Projects []string
	// Accounts limits which AWS accounts' ECR images this cluster may pull
	// (overrides Options.Accounts when non-empty).
	Accounts []string
	// Images turns on image collection for this cluster (see Options.Images;
	// either being true turns it on).
	Images bool
	// Subnets limits which EC2 subnets this cluster's pods and nodes can hold
	// addresses in (overrides Options.Subnets when non-empty).
	Subnets []string
	// Workloads turns on Job, CronJob, Pod and Node collection for this
	// cluster (see Options.Workloads; either being true turns it on).
	Workloads bool
	// Timeout bounds the whole collection of this cluster (overrides
	// Options.Timeout when > 0).
	Timeout time.Duration
	// QPS and Burst set the client-side rate limit; zero keeps client-go's
	// defaults (5 and 10).
	QPS   float32
	Burst int
	// PageSize is the list page size (overrides Options.PageSize when > 0).
	PageSize int64
	// Place and CloudName say where the cluster lives and its name there:
	// a record its agent published is found and checked by them.
	Place     inventory.Place
	CloudName string
}

// RESTConfig builds the rest.Config for t: in-cluster, or from its kubeconfig
// and context. Errors name the cluster, the kubeconfig and what to fix.
func RESTConfig(t Target) (*rest.Config, error) {
	var cfg *rest.Config
	if t.Discovered {
		switch {
		case t.Endpoint == "":
			return nil, fmt.Errorf("cluster %s: discovery returned no endpoint (is it still being created?)", t.Name)
		case len(t.CAData) == 0:
			return nil, fmt.Errorf("cluster %s: discovery returned no CA certificate for %s, so its server cannot be verified", t.Name, t.Endpoint)
		case t.Token == nil:
			return nil, fmt.Errorf("cluster %s: no identity to read it with (its discovery scope mints no token)", t.Name)
		}
		// The token source refreshes before expiry, and again on a 401.
		cfg = &rest.Config{Host: t.Endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: t.CAData},
			WrapTransport: transport.TokenSourceWrapTransport(t.Token)}
	} else if t.InCluster {
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("cluster %s: in-cluster config: %v (in_cluster needs reclaim to run in a pod with a service account token mounted)", t.Name, err)
		}
		cfg = c
	} else {
		rules := clientcmd.NewDefaultClientConfigLoadingRules()
		where := "default kubeconfig (" + strings.Join(rules.GetLoadingPrecedence(), string(rulesSeparator)) + ")"
		if t.Kubeconfig != "" {
			rules.ExplicitPath = t.Kubeconfig
			where = "kubeconfig " + t.Kubeconfig
		}
		raw, err := rules.Load()
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %s: cannot load: %v", t.Name, where, err)
		}
		ctxName := t.Context
		if ctxName == "" {
			ctxName = raw.CurrentContext
			if ctxName == "" {
				return nil, fmt.Errorf("cluster %s: %s: no context given and no current-context set; set the context for this cluster", t.Name, where)
			}
		}
		if _, ok := raw.Contexts[ctxName]; !ok {
			have := make([]string, 0, len(raw.Contexts))
			for n := range raw.Contexts {
				have = append(have, fmt.Sprintf("%q", n))
			}
			sort.Strings(have)
			avail := "it has no contexts"
			if len(have) > 0 {
				avail = "it has " + strings.Join(have, ", ")
			}
			return nil, fmt.Errorf("cluster %s: %s: context %q not found (%s)", t.Name, where, ctxName, avail)
		}
		cc := clientcmd.NewNonInteractiveClientConfig(*raw, ctxName, &clientcmd.ConfigOverrides{}, rules)
		c, err := cc.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("cluster %s: %s: context %q: %v", t.Name, where, ctxName, err)
		}
		cfg = c
	}
	cfg = rest.CopyConfig(cfg)
	if t.QPS > 0 {
		cfg.QPS = t.QPS
	}
	if t.Burst > 0 {
		cfg.Burst = t.Burst
	}
	cfg.UserAgent = UserAgent
	return cfg, nil
}

// rulesSeparator joins the default kubeconfig search path in messages.
const rulesSeparator = ':'

// Clients builds the typed and dynamic clients for t.
func Clients(t Target) (kubernetes.Interface, dynamic.Interface, error) {
	cfg, err := RESTConfig(t)
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: kubernetes client for %s: %v", t.Name, cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: dynamic client for %s: %v", t.Name, cfg.Host, err)
	}
	return cs, dyn, nil
}
