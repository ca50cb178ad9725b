//go:build tools

// The etcd image carries etcdctl beside etcd, as upstream's does; hack/tools/build.sh builds it
// from this module, which this import keeps required at the server's version.
package main

import _ "go.etcd.io/etcd/etcdctl/v3"
