// Package packaging is slipway's package controller: kapp-controller's APIs
// (packaging.carvel.dev PackageRepository and PackageInstall, data.packaging.carvel.dev Package
// and PackageMetadata as CRDs, kappctrl.k14s.io App) reconciled by slipway's own code, because
// kapp-controller cannot share a binary with this stack. Sub-packages hold one reconciler per kind;
// the App pipeline's stages (fetch, template, deploy) are the library internal/carvel.
package packaging
