// Package packaging is the flow behind `slipway package`, the tanzu package plugin's verbs:
// package repositories, the packages they make available, and installed packages.
package packaging
