// Command etcd is the upstream etcd server v3.6.5, built from its etcdmain package.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
