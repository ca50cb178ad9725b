//go:build tools

// Package clients pins the upstream clients slipway's e2e tests run against what slipway
// makes: Cluster API's clusterctl, as a user would `go install` it.
package clients

import (
	_ "sigs.k8s.io/cluster-api/cmd/clusterctl"
)
