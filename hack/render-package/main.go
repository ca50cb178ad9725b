// Command render-package prints what a package source of packages/ deploys, rendered with its
// default values through its ytt step, as the package controller would template it. It serves
// where installing the package needs more than its objects (the bench, the README's example).
//
// Usage: go run ./hack/render-package packages/<refName>/<version>
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/slipway-dev/slipway/internal/packaging/template"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: render-package packages/<refName>/<version>")
		os.Exit(2)
	}
	out, err := template.RenderSource(context.Background(), os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "render-package:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
