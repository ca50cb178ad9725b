package podnet

import _ "embed"

// Manifest is the pod network's DaemonSet and what it runs as, which a control-plane node
// applies at every boot.
//
//go:embed pod-network.yaml
var Manifest []byte
