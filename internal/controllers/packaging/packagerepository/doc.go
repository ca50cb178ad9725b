// Package packagerepository reconciles packaging.carvel.dev PackageRepositories as
// kapp-controller does: it fetches the repository (an imgpkg bundle, an image or inline files),
// renders its packages/ directory, and keeps the Package and PackageMetadata objects it lists in
// the repository's namespace, pruning those the repository no longer has.
package packagerepository
