package refcluster

import "syscall"

// sysProcAttr has the kernel kill a component when the process that
// started it dies (a test binary that panics or times out leaves no
// kube-apiserver behind).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
