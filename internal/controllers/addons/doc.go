// Package addons is the addons manager of seeds/002: the ClusterBootstrap and *Config
// reconcilers and their webhooks. It runs on the management cluster as the
// tanzu-addons-manager component.
package addons
