package managementcluster

import (
	"testing"
)

func TestBOM(t *testing.T) {
	pkg := func(refName, version, image string) []byte {
		return []byte("apiVersion: data.packaging.carvel.dev/v1alpha1\nkind: Package\nmetadata:\n  name: " + refName + "." + version +
			"\nspec:\n  refName: " + refName + "\n  version: " + version + "\n  template:\n    spec:\n      fetch:\n      - imgpkgBundle:\n          image: " + image + "\n")
	}
	r := &Repository{
		Ref: "127.0.0.1:5000/packages/slipway-repo:v0.1.0",
		files: map[string][]byte{
			"packages/tkg.tanzu.vmware.com/2.5.2.yml":      pkg("tkg.tanzu.vmware.com", "2.5.2", "127.0.0.1:5000/packages/tkg:v2.5.2"),
			"packages/antrea.tanzu.vmware.com/1.9.0.yml":   pkg("antrea.tanzu.vmware.com", "1.9.0", "127.0.0.1:5000/packages/antrea:v1.9.0"),
			"packages/antrea.tanzu.vmware.com/1.13.1.yml":  pkg("antrea.tanzu.vmware.com", "1.13.1", "127.0.0.1:5000/packages/antrea:v1.13.1"),
			"packages/antrea.tanzu.vmware.com/README.txt":  []byte("not a package"),
			"packages/other.tanzu.vmware.com/metadata.yml": []byte("apiVersion: data.packaging.carvel.dev/v1alpha1\nkind: PackageMetadata\n"),
		},
		// A copied repository's lock moves the antrea bundle elsewhere, by digest.
		locked: map[string]string{"127.0.0.1:5000/packages/antrea:v1.13.1": "mirror.example/tkg/antrea@sha256:abc"},
	}
	bom, err := r.BOM("v1.35.4+vmware.1")
	if err != nil {
		t.Fatal(err)
	}
	if bom.Release.Version != "v2.5.2" || bom.Default.K8sVersion != "v1.35.4+vmware.1" || bom.ImageConfig.ImageRepository != "127.0.0.1:5000/packages" {
		t.Errorf("release %q, default %q, image repository %q", bom.Release.Version, bom.Default.K8sVersion, bom.ImageConfig.ImageRepository)
	}
	if got := bom.ManagementPackageRepository; got.ImagePath != "slipway-repo" || got.Tag != "v0.1.0" {
		t.Errorf("management package repository %+v", got)
	}
	antrea := bom.Components["antrea.tanzu.vmware.com"]
	if len(antrea) != 2 || antrea[0].Version != "v1.13.1" || antrea[1].Version != "v1.9.0" {
		t.Fatalf("antrea's versions, newest first: %+v", antrea)
	}
	if got := antrea[0].Images["packageBundle"]; got.ImagePath != "mirror.example/tkg/antrea" || got.Digest != "sha256:abc" || got.Tag != "" {
		t.Errorf("antrea 1.13.1's bundle, as locked: %+v", got)
	}
	if got := antrea[1].Images["packageBundle"]; got.ImagePath != "antrea" || got.Tag != "v1.9.0" {
		t.Errorf("antrea 1.9.0's bundle, in the image repository: %+v", got)
	}
	if len(bom.Components) != 2 {
		t.Errorf("components %v: want tkg and antrea only", bom.Components)
	}
}
