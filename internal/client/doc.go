// Package client holds the flows behind slipway's commands, one sub-package per noun, so that
// commands only parse flags and print; RESTConfig is the API client configuration they share.
package client
