// Package config embeds slipway's generated manifests, so that a component can install the CRDs
// it serves: the TKG APIs (crd/bases), kapp-controller's APIs (crd/carvel) and
// the local infrastructure provider's (crd/infrastructure); and the local runtime's pod network,
// which a node applies.
package config

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed crd/bases/*.yaml crd/carvel/*.yaml crd/infrastructure/*.yaml
var crds embed.FS

// PodNetwork is the local runtime's own pod network: its DaemonSet and what it runs as.
//
//go:embed local-pod-network/pod-network.yaml
var PodNetwork []byte

// CRD sets.
const (
	// CarvelCRDs are kapp-controller's APIs: App, PackageRepository, PackageInstall, Package,
	// PackageMetadata.
	CarvelCRDs = "crd/carvel"
	// TKGCRDs are the run, cni, cpi and csi APIs of TKG.
	TKGCRDs = "crd/bases"
	// LocalInfrastructureCRDs are the `local` Cluster API infrastructure provider's APIs.
	LocalInfrastructureCRDs = "crd/infrastructure"
)

// CRDs returns the CRDs of a set.
func CRDs(set string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crds, set+"/*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		if strings.HasSuffix(f, "/kustomization.yaml") {
			continue
		}
		data, err := crds.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, crd)
	}
	return out, nil
}
