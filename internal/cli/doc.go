// Package cli assembles slipway's command tree. Each noun is a package below this one with one
// NewCommand per verb; the work is done in internal/client so that commands stay thin and
// testable with fake streams.
package cli
