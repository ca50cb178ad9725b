//go:build tools

// Package tools pins the Carvel command lines kapp-controller runs, which its image carries.
package tools

import (
	_ "carvel.dev/kapp/cmd/kapp"
	_ "carvel.dev/kbld/cmd/kbld"
	_ "carvel.dev/vendir/cmd/vendir"
	_ "carvel.dev/ytt/cmd/ytt"
)
