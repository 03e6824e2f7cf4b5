package internal

import (
	_ "cloud.google.com/go/compute/apiv1"
	_ "github.com/spf13/cobra"
	_ "go.uber.org/zap"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/tools/pager"
	_ "sigs.k8s.io/yaml"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "google.golang.org/api/option"
)
