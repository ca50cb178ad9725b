// Package hostnet names the host-only network every node of the local runtime sits on.
// 198.18.0.0/15 is reserved for benchmarking (RFC 2544): it collides with no private range
// (10/8, 172.16/12, 192.168/16) nor with TKG's default cluster and service CIDRs (100.96.0.0/11,
// 100.64.0.0/13). The host has the first address; it does not forward (no NAT, no route off the
// host), so every packet stays on this machine.
package hostnet
