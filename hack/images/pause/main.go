// Command pause is the sandbox container of every pod: it holds the pod's namespaces open until
// it is told to stop, and reaps the zombies of the processes that share its PID namespace, as
// Kubernetes' own pause (build/pause) does.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 {
		// Kubernetes' pause answers -v with its version; this one answers any argument with what it is.
		os.Stdout.WriteString("pause (slipway): holds a pod's namespaces until SIGINT or SIGTERM and reaps its zombies; takes no arguments\n")
		return
	}
	if os.Getpid() != 1 {
		os.Stderr.WriteString("pause: warning: not running as PID 1\n")
	}
	signals := make(chan os.Signal, 8)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Stderr.WriteString("pause: shutting down, got signal\n")
			os.Exit(0)
		}
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
