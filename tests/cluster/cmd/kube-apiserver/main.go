// Command kube-apiserver is the upstream Kubernetes API server, built from
// k8s.io/kubernetes/cmd/kube-apiserver/app at the version pinned in go.mod.
// It mirrors k8s.io/kubernetes/cmd/kube-apiserver/apiserver.go.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zone support, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	command := app.NewAPIServerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
