// Package app reconciles kappctrl.k14s.io Apps as kapp-controller does: fetch, template and
// deploy on every sync, into the App's cluster through its service account or into another
// cluster through spec.cluster.kubeconfigSecretRef, with kapp-controller's status and
// conditions; delete removes what was deployed unless noopDelete is set.
package app
