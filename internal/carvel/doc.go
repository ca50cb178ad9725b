// Package carvel holds slipway's Carvel plumbing, the library the CLI, the controllers and the
// runtimes share: imgpkg bundles built and pushed (bundle), an App's fetch steps written into a
// directory (fetch), ytt and kbld's rendering (template), and kapp's apply, record, wait and
// delete (deploy). The package controller (internal/controllers/packaging) runs them as an App's
// three stages; the CLI pushes bundles, the TKR source and the management-cluster flows render and
// apply packages, and the node pulls images with them. No package here imports a controller (a
// test of template reads the propagation controller's configuration).
package carvel
