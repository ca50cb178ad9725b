// Package carvel holds slipway's Carvel plumbing, the library the CLI, the controllers and the
// runtimes share: imgpkg bundles built and pushed (bundle), an App's fetch steps written into a
// directory (fetch), ytt and kbld's rendering (template), and kapp's apply, record, wait and
// delete (deploy). The CLI pushes bundles and installs kapp-controller with them before
// kapp-controller runs, the TKR source reads its catalogue with them, and the node pulls images
// with them; on the clusters, upstream kapp-controller runs packages. No package here imports a
// controller (a test of template reads the propagation controller's configuration).
package carvel
