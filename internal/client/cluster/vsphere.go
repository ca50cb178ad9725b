package cluster

import (
	"context"
	"fmt"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// CheckVSphere runs TKG's vSphere prerequisites for a configuration before anything is created
// (seeds/000's lines through infof) and sets its inventory variables to the full paths found.
// images are the node OVAs the cluster may run on; usedEndpoints the control-plane endpoints
// of the clusters that exist, to their names; accept, where TKG prompts, whether to go on with
// the vCenter's thumbprint when VSPHERE_TLS_THUMBPRINT is unset or differs (nil refuses), which
// then becomes the configuration's.
func CheckVSphere(ctx context.Context, cfg *config.Cluster, management bool, release string, images []prerequisites.Image,
	usedEndpoints map[string]string, accept func(host, thumbprint, configured string) bool, infof func(string, ...any)) error {
	vs := cfg.VSphere
	resolved, err := prerequisites.Check(ctx, prerequisites.Environment{
		Server: vs.Server, Username: vs.Username, Password: vs.Password, Thumbprint: vs.TLSThumbprint, Insecure: vs.Insecure,
		Datacenter: vs.Datacenter, Network: vs.Network, ResourcePool: vs.ResourcePool, Datastore: vs.Datastore, Folder: vs.Folder,
		ControlPlaneEndpoint: vs.ControlPlaneEndpoint, ManagementCluster: management, UsedEndpoints: usedEndpoints,
		Release: release, Images: images, AcceptThumbprint: accept,
	}, infof)
	if err != nil {
		return err
	}
	if !vs.Insecure {
		vs.TLSThumbprint = resolved.Thumbprint
	}
	for variable, field := range map[string]*string{
		config.VSphereDatacenter: &vs.Datacenter, config.VSphereNetwork: &vs.Network, config.VSphereResourcePool: &vs.ResourcePool,
		config.VSphereDatastore: &vs.Datastore, config.VSphereFolder: &vs.Folder,
	} {
		if p, ok := resolved.Paths[variable]; ok {
			*field = p
		}
	}
	return nil
}

// releaseImages are the vSphere node OVAs of a release on the management cluster, for the
// configuration's OS.
func releaseImages(ctx context.Context, c client.Client, tkr *runv1alpha3.TanzuKubernetesRelease, cfg *config.Cluster) ([]prerequisites.Image, error) {
	var images []prerequisites.Image
	for _, ref := range tkr.Spec.OSImages {
		img := &runv1alpha3.OSImage{}
		if err := c.Get(ctx, client.ObjectKey{Name: ref.Name}, img); err != nil {
			return nil, fmt.Errorf("OSImage %s of release %s: %w", ref.Name, tkr.Name, err)
		}
		version, _ := img.Spec.Image.Ref["version"].(string)
		os := vcenter.OS{Name: img.Spec.OS.Name, Version: strings.ReplaceAll(img.Spec.OS.Version, ".", ""), Arch: img.Spec.OS.Arch}
		if img.Spec.Image.Type != "ova" || version == "" || os.Name != cfg.OSName ||
			os.Version != strings.ReplaceAll(cfg.OSVersion, ".", "") || os.Arch != cfg.OSArch {
			continue
		}
		images = append(images, prerequisites.Image{OVAVersion: version, OS: os})
	}
	if len(images) == 0 {
		return nil, fmt.Errorf("release %s has no vSphere node image of %s %s %s: set %s, %s and %s to one of its OSImages' (`slipway kubernetes-release os get %s`)",
			tkr.Name, cfg.OSName, cfg.OSVersion, cfg.OSArch, config.OSName, config.OSVersion, config.OSArch, tkr.Spec.Version)
	}
	return images, nil
}

// usedEndpoints are the control-plane endpoints of the management cluster's clusters.
func usedEndpoints(ctx context.Context, c client.Client) (map[string]string, error) {
	list := &clusterv1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("failed to list the clusters: %w", err)
	}
	used := map[string]string{}
	for _, cl := range list.Items {
		if host := cl.Spec.ControlPlaneEndpoint.Host; host != "" {
			used[host] = fmt.Sprintf("cluster '%s'", cl.Name)
		}
	}
	return used, nil
}
