// Command etcd is the upstream etcd server (go.etcd.io/etcd/server/v3/etcdmain)
// at the version k8s.io/kubernetes pins, with the usual etcd command line.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
