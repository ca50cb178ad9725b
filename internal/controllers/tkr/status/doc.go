// Package status is TKG's TKR status controller: it labels releases and OSImages so that label
// selectors find them (version prefixes, OS fields, incompatible, invalid), sets each release's
// Valid and Ready conditions, and sets each Cluster's UpdatesAvailable condition.
package status
