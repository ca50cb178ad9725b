package cluster

import (
	"bytes"
	"context"
	"embed"
	"encoding/base64"
	"fmt"
	"net"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/assets"
	"github.com/slipway-dev/slipway/internal/local/vm"
)

//go:embed manifests/*.yaml
var manifests embed.FS

// Manifest sets applied while a cluster starts, as kubeadm init and kind apply them.
const (
	// ManifestKubeadm is what kubeadm's upload-config and bootstrap-token phases write:
	// kubeadm-config, kubelet-config, cluster-info and their RBAC.
	ManifestKubeadm = "kubeadm.yaml"
	// ManifestAddons is kubeadm's addon phase: kube-proxy and CoreDNS.
	ManifestAddons = "addons.yaml"
	// ManifestCNI is kind's CNI, kindnet.
	ManifestCNI = "cni.yaml"
	// ManifestStorage is kind's default StorageClass.
	ManifestStorage = "storage.yaml"
	// ManifestLocalPath is the StorageClass's provisioner on real nodes, as kind installs it:
	// Rancher's local-path-provisioner, making each volume a directory of its node.
	ManifestLocalPath = "local-path.yaml"
)

// fieldOwner is the field manager of what slipway applies.
const fieldOwner = client.FieldOwner("slipway")

// manifestValues are what the manifests are rendered with.
type manifestValues struct {
	Name, KubernetesVersion, Endpoint, EndpointHostPort string
	// ImageTag is the version as an image tag: "+" is not allowed in tags, and kubeadm writes
	// it "_" (v1.34.3+vmware.1 → v1.34.3_vmware.1).
	ImageTag                                        string
	DNSDomain, DNSServiceIP, ServiceCIDR, PodSubnet string
	CAData                                          string
	// LocalPathImage is the image of the StorageClass's provisioner; LocalPathDir is where it
	// makes volumes on a node.
	LocalPathImage, LocalPathDir string
}

func newManifestValues(spec *Spec, caPEM []byte) manifestValues {
	return manifestValues{
		Name:              spec.Name,
		KubernetesVersion: spec.KubernetesVersion,
		ImageTag:          strings.ReplaceAll(spec.KubernetesVersion, "+", "_"),
		Endpoint:          spec.Endpoint(),
		EndpointHostPort:  net.JoinHostPort(spec.EndpointHost(), fmt.Sprint(APIServerPort)),
		DNSDomain:         DNSDomain,
		DNSServiceIP:      DNSServiceIP,
		ServiceCIDR:       ServiceCIDR,
		PodSubnet:         PodSubnet,
		CAData:            base64.StdEncoding.EncodeToString(caPEM),
		LocalPathImage:    assets.LocalPathProvisionerImage,
		LocalPathDir:      vm.LocalPathDir,
	}
}

// renderManifest returns the objects of one manifest set.
func renderManifest(name string, values manifestValues) ([]*unstructured.Unstructured, error) {
	raw, err := manifests.ReadFile("manifests/" + name)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New(name).Option("missingkey=error").Parse(string(raw))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, values); err != nil {
		return nil, err
	}
	decoder := utilyaml.NewYAMLOrJSONDecoder(&buf, 4096)
	var objs []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := decoder.Decode(&u.Object); err != nil {
			if err.Error() == "EOF" {
				break
			}
			return nil, fmt.Errorf("manifest %s: %w", name, err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
	return objs, nil
}

// applyManifest applies one manifest set with server-side apply.
func applyManifest(ctx context.Context, c client.Client, name string, values manifestValues) error {
	objs, err := renderManifest(name, values)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), fieldOwner, client.ForceOwnership); err != nil {
			return fmt.Errorf("failed to apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// ApplyInitManifests applies what kubeadm init uploads and installs once the first API server
// answers (kubeadm-config, kubelet-config, cluster-info, bootstrap-token RBAC, kube-proxy and
// CoreDNS); the node agent of a machine's init node runs it, as kubeadm init would on it.
func ApplyInitManifests(ctx context.Context, c client.Client, spec *Spec, caPEM []byte) error {
	values := newManifestValues(spec, caPEM)
	for _, m := range []string{ManifestKubeadm, ManifestAddons} {
		if err := applyManifest(ctx, c, m, values); err != nil {
			return err
		}
	}
	return nil
}
