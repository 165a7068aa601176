// Command kubectl is the upstream kubectl, built from the k8s.io/kubectl
// module for machines that have none. It lives in its own module so that
// setpoint itself never depends on kubectl or client-go.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() {
	os.Exit(cli.Run(cmd.NewDefaultKubectlCommand()))
}
