// Package registrytrust makes the HTTP transport slipway reads a registry through when TKG's
// configuration says how to trust it: CA certificates added to the system's
// (TKG_CUSTOM_IMAGE_REPOSITORY_CA_CERTIFICATE, kapp-controller's caCerts) and hosts whose
// certificates are not verified (TKG_CUSTOM_IMAGE_REPOSITORY_SKIP_TLS_VERIFY, kapp-controller's
// dangerousSkipTLSVerify). A leaf.
package registrytrust
