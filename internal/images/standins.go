package images

import (
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/internal/assets"
)

// StandIn is an image that cannot be built on slipway's host: `make images` makes it of
// slipway's binary, which says in its log what it stands in for and waits.
type StandIn struct {
	// Ref is the image's reference, as TKG's packages name it.
	Ref string
	// Why it cannot be built here.
	Why string
}

const (
	noDatapath = "its agent needs a datapath (OVS or BIRD) that a node of the local runtime does not have"
	noCSI      = "the Go module proxy this host reaches refuses its module (403, measured 2026-11-26), and it needs vCenter's CNS API"
	refused    = "the Go module proxy this host reaches refuses its module at this version (403, measured 2026-11-26)"
	noALB      = "it drives an NSX Advanced Load Balancer controller, which this host does not have"
	noVIP      = "the Go module proxy this host reaches refuses its module (403, measured 2026-11-26); on the vCenter simulator's VMs, which boot as nodes of this host, the hypervisor's load balancer holds the control-plane endpoint"
)

// tkg is TKG's image repository, under which every stand-in is named.
const tkg = assets.ImageRepository + "/"

// StandIns are the stand-in images.
var StandIns = []StandIn{
	{Ref: tkg + "antrea-advanced-debian:v1.11.2_vmware.1", Why: noDatapath},
	{Ref: tkg + "antrea-advanced-debian:v1.13.1_vmware.1", Why: noDatapath},
	{Ref: tkg + "calico-all/calico-node:v3.25.1_vmware.2", Why: noDatapath},
	{Ref: tkg + "calico-all/calico-node:v3.26.3_vmware.2", Why: noDatapath},
	{Ref: tkg + "calico-all/calico-kube-controllers:v3.25.1_vmware.2", Why: noDatapath},
	{Ref: tkg + "calico-all/calico-kube-controllers:v3.26.3_vmware.2", Why: noDatapath},
	{Ref: tkg + "csi/vsphere-block-csi-driver:v3.0.1_vmware.4", Why: noCSI},
	{Ref: tkg + "csi/vsphere-block-csi-driver:v3.1.2_vmware.4", Why: noCSI},
	{Ref: tkg + "ako-operator:v1.11.0_vmware.2", Why: noALB},
	{Ref: tkg + "secretgen-controller:v0.14.2_vmware.2", Why: refused},
	{Ref: tkg + "secretgen-controller:v0.15.0_vmware.2", Why: refused},
	{Ref: tkg + "pinniped:v0.24.0_vmware.1", Why: refused},
	{Ref: tkg + "pinniped:v0.25.0_vmware.1", Why: refused},
	// The static pod TKG's vSphere ClusterClass writes on every control-plane VM.
	{Ref: tkg + "kube-vip:v0.8.9_vmware.1", Why: noVIP},
	{Ref: tkg + "kube-vip:v0.9.2_vmware.1", Why: noVIP},
}

// IsStandIn says whether a pod's image is one of the stand-ins, under TKG's repository or
// relocated by TKG_CUSTOM_IMAGE_REPOSITORY, which keeps the path below the repository. An image
// named by tag matches a stand-in's path and tag; one locked by digest alone, as packages name
// their images (or named by neither), matches a stand-in's path: every version of a stand-in's
// image is one. An image copied into one repository (imgpkg copy --to-repo) keeps no path but
// its digest: it is one when digests, the stand-ins' of the layout `make images` built
// (StandInDigests), holds that digest.
func IsStandIn(image string, digests map[string]bool) bool {
	image, digest, _ := strings.Cut(image, "@")
	if digests[digest] {
		return true
	}
	tagged := strings.LastIndex(image, ":") > strings.LastIndex(image, "/")
	for _, s := range StandIns {
		path := strings.TrimPrefix(s.Ref, assets.ImageRepository)
		if !tagged {
			path, _, _ = strings.Cut(path, ":")
		}
		if strings.HasSuffix(image, path) {
			return true
		}
	}
	return false
}

// StandInDigests returns the manifest digests of the stand-in images of the OCI layout in dir
// (`make images`' LayoutDir under the assets directory), read from its index.
func StandInDigests(dir string) (map[string]bool, error) {
	_, manifest, err := layoutIndex(dir)
	if err != nil {
		return nil, err
	}
	digests := map[string]bool{}
	for _, desc := range manifest.Manifests {
		ref := desc.Annotations[AnnotationRefName]
		if slices.ContainsFunc(StandIns, func(s StandIn) bool { return s.Ref == ref }) {
			digests[desc.Digest.String()] = true
		}
	}
	return digests, nil
}
