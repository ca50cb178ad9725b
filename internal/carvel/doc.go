// Package carvel holds slipway's Carvel plumbing, the library the CLI, the controllers and the
// runtimes share: imgpkg bundles built and pushed (bundle), an App's fetch steps written into a
// directory (fetch), ytt and kbld's rendering (template), and kapp's apply, record, wait and
// delete (deploy). The CLI pushes bundles and installs kapp-controller with them before
// kapp-controller runs, the TKR source reads its catalogue with them, and the node pulls images
// with them; on the clusters, upstream kapp-controller runs packages. No package here imports a
// controller (a test of template reads the propagation controller's configuration).
//
// It stands on the Carvel libraries where they can be linked in: ytt's (template) and imgpkg's
// lockconfig, whose types the images locks are read and written in. imgpkg's pull and copy API
// (pkg/imgpkg/v1) is not used: its registry package links the AWS, Azure and Google credential
// helpers (379 packages against lockconfig's 30, `go list -deps`) into every binary that fetches,
// the TKR source controller's included, so bundles are pulled with go-containerregistry, which
// imgpkg itself uses, and a copied bundle's lock is followed as imgpkg pull follows it.
package carvel
