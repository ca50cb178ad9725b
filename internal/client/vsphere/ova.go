// Package vsphere holds the flows of `slipway vsphere`: node OVAs built for the simulator and
// imported into a vCenter as templates.
package vsphere

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/slipway-dev/slipway/internal/config"
	"github.com/slipway-dev/slipway/internal/vsphere/ova"
	"github.com/slipway-dev/slipway/internal/vsphere/prerequisites"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// releaseVersion is a Kubernetes release's version as TKRs write it.
var releaseVersion = regexp.MustCompile(`^(v\d+\.\d+\.\d+\+vmware\.\d+)-tkg\.\d+$`)

// osImages are the node OSes of the catalogue's vSphere OSImages, by the name --os takes.
var osImages = map[string]vcenter.OS{
	"ubuntu-20.04": {Name: "ubuntu", Version: "20.04", Arch: "amd64"},
	"photon-3":     {Name: "photon", Version: "3", Arch: "amd64"},
}

// NodeImage is the node OVA a release's OVA OSImage names: its VERSION property is the
// release's version and the OS (v1.35.4+vmware.1-tkg.1-ubuntu-2004), its VM name TKG's
// (ubuntu-2004-kube-v1.35.4+vmware.1).
func NodeImage(release, osName string) (ova.Image, error) {
	m := releaseVersion.FindStringSubmatch(release)
	if m == nil {
		return ova.Image{}, fmt.Errorf("invalid --kubernetes-release %q: use a release's version, such as v1.35.4+vmware.1-tkg.1 (`slipway kubernetes-release get`)", release)
	}
	os, ok := osImages[osName]
	if !ok {
		return ova.Image{}, fmt.Errorf("invalid --os %q: use ubuntu-20.04 or photon-3, the OSes of the releases' vSphere images", osName)
	}
	short := os.Name + "-" + strings.ReplaceAll(os.Version, ".", "")
	return ova.Image{Name: short + "-kube-" + m[1], OVAVersion: release + "-" + short, Distro: os}, nil
}

// ReleaseImage is the node OVA of a release for a cluster configuration's OS, as the release's
// OSImages of the package repository's catalogue name it, for the template check of
// management-cluster create, which runs before any cluster holds the release.
func ReleaseImage(release string, cfg *config.Cluster) (prerequisites.Image, error) {
	img, err := NodeImage(release, cfg.OSName+"-"+cfg.OSVersion)
	if err != nil || img.Distro.Arch != cfg.OSArch {
		return prerequisites.Image{}, fmt.Errorf("release %s has no vSphere node image of %s %s %s: set %s, %s and %s to ubuntu 20.04 amd64 or photon 3 amd64",
			release, cfg.OSName, cfg.OSVersion, cfg.OSArch, config.OSName, config.OSVersion, config.OSArch)
	}
	return prerequisites.Image{OVAVersion: img.OVAVersion, OS: vcenter.OS{Name: img.Distro.Name,
		Version: strings.ReplaceAll(img.Distro.Version, ".", ""), Arch: img.Distro.Arch}}, nil
}

// BuildOVA writes the node OVA of a release and OS to w.
func BuildOVA(w io.Writer, release, osName string) (ova.Image, error) {
	img, err := NodeImage(release, osName)
	if err != nil {
		return img, err
	}
	return img, ova.Build(w, img)
}

// ImportOptions are what ImportOVA takes.
type ImportOptions struct {
	// File and Environ are a cluster configuration file and the environment: the VSPHERE_*
	// variables say which vCenter and where in it.
	File    string
	Environ []string
	// OVA is the file to import; Name the template's name, empty for the OVA's.
	OVA, Name string
}

// ImportOVA imports a node OVA into the vCenter of the configuration, in its VSPHERE_FOLDER,
// VSPHERE_RESOURCE_POOL, VSPHERE_DATASTORE and VSPHERE_NETWORK, and marks it a template; it
// returns the template's path.
func ImportOVA(ctx context.Context, o ImportOptions) (string, error) {
	v, err := config.Read(o.File, o.Environ)
	if err != nil {
		return "", err
	}
	vs, err := config.ReadVSphere(v)
	if err != nil {
		return "", err
	}
	var missing []string
	for name, value := range map[string]string{config.VSphereDatacenter: vs.Datacenter, config.VSphereFolder: vs.Folder,
		config.VSphereResourcePool: vs.ResourcePool, config.VSphereDatastore: vs.Datastore} {
		if value == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("missing configuration variables for the import: %s: they say where the template goes", strings.Join(slices.Sorted(slices.Values(missing)), ", "))
	}
	c, _, err := prerequisites.Connect(ctx, prerequisites.Environment{Server: vs.Server, Username: vs.Username, Password: vs.Password,
		Thumbprint: vs.TLSThumbprint, Insecure: vs.Insecure})
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Logout(context.WithoutCancel(ctx)) }()
	return ova.Import(ctx, c.Client, o.OVA, ova.Target{Datacenter: vs.Datacenter, Folder: vs.Folder, ResourcePool: vs.ResourcePool,
		Datastore: vs.Datastore, Network: vs.Network, Name: o.Name})
}
