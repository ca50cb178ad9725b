package hostnet

import "testing"

// TestReaches checks which addresses a node reaches: those of the bridge, with or without a
// port, and nothing off it, nor a name.
func TestReaches(t *testing.T) {
	for address, want := range map[string]bool{
		"198.18.0.1:8989":      true,
		"198.18.255.1":         true,
		"198.19.3.4:443":       true,
		"198.20.0.1":           false,
		"127.0.0.1:8989":       false,
		"10.0.0.5":             false,
		"vcenter.corp.example": false,
		"":                     false,
	} {
		if got := Reaches(address); got != want {
			t.Errorf("Reaches(%q) = %v, want %v", address, got, want)
		}
	}
}
