//go:build !linux

package testenv

import "os/exec"

// setPdeathsig is a no-op outside Linux: a crashed test may leave etcd and
// kube-apiserver running there.
func setPdeathsig(cmd *exec.Cmd) {}
