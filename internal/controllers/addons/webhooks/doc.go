// Package webhooks holds the admission webhooks of the addons manager, as typed validators and
// defaulters that return field errors with full paths.
package webhooks
