// Command images builds every image slipway ships, without Docker, as ko does: each a static Go
// binary (/manager) on one small shared base layer (CA certificates, /tmp, a non-root user),
// labelled with its source module and version. Upstream components are built from upstream's own
// main packages in their own modules under hack/images; slipway's components and the stand-ins
// for what cannot be built here come from slipway's binary. The images are written to an OCI
// image layout (bin/images/layout), each named by the reference the manifests write, so that
// `make providers` and `make packages` lock them by digest whatever registry they are pushed to.
//
// Usage:
//
//	go run ./hack/images build           build the images into the layout
//	go run ./hack/images push REGISTRY   push the layout's images to REGISTRY
//	go run ./hack/images list            print each image's reference, digest and size
//	go run ./hack/images conformance REGISTRY  build and push the conformance tests' images
//
// An image is pushed to REGISTRY/<its reference's repository path>:<tag>; a push the registry
// already holds is skipped.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/slipway-dev/slipway/internal/assets"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: images build | push REGISTRY | list | conformance REGISTRY")
	}
	root, err := assets.SourceRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "bin", "images")
	switch args[0] {
	case "build":
		if len(args) != 1 {
			return fmt.Errorf("usage: images build")
		}
		return build(root, dir, specs())
	case "push":
		if len(args) != 2 {
			return fmt.Errorf("usage: images push REGISTRY")
		}
		return pushAll(dir, args[1])
	case "conformance":
		// The images of Kubernetes' conformance tests, apart from the ones slipway ships.
		if len(args) != 2 {
			return fmt.Errorf("usage: images conformance REGISTRY")
		}
		specs, err := conformanceSpecs(root)
		if err != nil {
			return err
		}
		if err := build(root, filepath.Join(dir, "conformance"), specs); err != nil {
			return err
		}
		return pushAll(filepath.Join(dir, "conformance"), args[1])
	case "list":
		return list(dir)
	default:
		return fmt.Errorf("unknown command %q: use build, push, list or conformance", args[0])
	}
}
