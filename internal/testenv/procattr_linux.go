//go:build linux

package testenv

import (
	"os/exec"
	"syscall"
)

// setPdeathsig makes the kernel SIGKILL the child when the thread that started
// it exits. Go never retires threads except those of goroutines that exit
// while locked to their thread, which testenv never does, so in practice this
// means "when the test process dies", including a crash or SIGKILL.
func setPdeathsig(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
