// Package packageinstall reconciles packaging.carvel.dev PackageInstalls as kapp-controller
// does: it resolves spec.packageRef to the highest Package version its versionSelection allows
// (Packages in the PackageInstall's namespace and in the global packaging namespace), creates and
// owns an App from the Package's template with the install's values, service account or cluster,
// and reports the App's state, the installed version and the last attempted one.
package packageinstall
