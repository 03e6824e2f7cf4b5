package testenv

import (
	"syscall"
	"time"
)

// CPUTime is this process's user and system CPU time so far (a
// benchmark's CPU per wall: its fakes' CPU included).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
