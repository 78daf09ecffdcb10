// Command kubectl is the upstream kubectl at the same version as the
// kube-apiserver built beside it (so tests run without client/server skew).
// It mirrors k8s.io/kubernetes/cmd/kubectl/kubectl.go, minus the optional
// client auth plugins (the test cluster's kubeconfig uses client certificates).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
