package v1alpha1

import (
	"encoding/json"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// ConversionDataAnnotation keeps, on a converted release, the spec of the version it was
// converted from, so that what one version cannot express survives a round trip: v1alpha3's
// OSImages and BootstrapPackages on a v1alpha1 object, v1alpha1's NodeImageRef and extra images
// on the stored v1alpha3 one.
const ConversionDataAnnotation = "run.tanzu.vmware.com/conversion-data"

// The v1alpha1 images that v1alpha3 has fields for.
const (
	imageEtcd    = "etcd"
	imagePause   = "pause"
	imageCoreDNS = "coredns"
	imageKubeVIP = "kube-vip"
)

// ConvertTo converts this release to the v1alpha3 hub.
func (r *TanzuKubernetesRelease) ConvertTo(hub conversion.Hub) error {
	return ToHub(r.ObjectMeta, r.Spec, r.Status, hub.(*v1alpha3.TanzuKubernetesRelease))
}

// ConvertFrom converts the v1alpha3 hub to this release.
func (r *TanzuKubernetesRelease) ConvertFrom(hub conversion.Hub) error {
	var err error
	r.ObjectMeta, r.Spec, r.Status, err = FromHub(hub.(*v1alpha3.TanzuKubernetesRelease))
	return err
}

// ToHub fills hub from a release in the v1alpha1 shape (v1alpha2's is the same).
func ToHub(meta metav1.ObjectMeta, spec TanzuKubernetesReleaseSpec, status TanzuKubernetesReleaseStatus, hub *v1alpha3.TanzuKubernetesRelease) error {
	hub.ObjectMeta = *meta.DeepCopy()
	hub.Spec = v1alpha3.TanzuKubernetesReleaseSpec{}
	if data, ok := meta.Annotations[ConversionDataAnnotation]; ok {
		if err := json.Unmarshal([]byte(data), &hub.Spec); err != nil {
			return fmt.Errorf("annotation %s of release %s is not a v1alpha3 spec: %w", ConversionDataAnnotation, meta.Name, err)
		}
	}
	hub.Spec.Version = spec.Version
	hub.Spec.Kubernetes.Version = spec.KubernetesVersion
	hub.Spec.Kubernetes.ImageRepository = spec.Repository
	k := &hub.Spec.Kubernetes
	k.Etcd, k.Pause, k.CoreDNS, k.KubeVIP = nil, nil, nil, nil
	for _, image := range spec.Images {
		info := &v1alpha3.ContainerImageInfo{ImageRepository: image.Repository, ImageTag: image.Tag}
		switch image.Name {
		case imageEtcd:
			k.Etcd = info
		case imagePause:
			k.Pause = info
		case imageCoreDNS:
			k.CoreDNS = info
		case imageKubeVIP:
			k.KubeVIP = info
		}
	}
	hub.Status.Conditions = status.Conditions.DeepCopy()
	return setConversionData(&hub.ObjectMeta, spec)
}

// FromHub returns a v1alpha3 release in the v1alpha1 shape.
func FromHub(hub *v1alpha3.TanzuKubernetesRelease) (metav1.ObjectMeta, TanzuKubernetesReleaseSpec, TanzuKubernetesReleaseStatus, error) {
	meta := *hub.ObjectMeta.DeepCopy()
	var kept TanzuKubernetesReleaseSpec
	if data, ok := meta.Annotations[ConversionDataAnnotation]; ok {
		if err := json.Unmarshal([]byte(data), &kept); err != nil {
			return meta, kept, TanzuKubernetesReleaseStatus{}, fmt.Errorf("annotation %s of release %s is not a v1alpha1 spec: %w", ConversionDataAnnotation, meta.Name, err)
		}
	}
	k := hub.Spec.Kubernetes
	spec := TanzuKubernetesReleaseSpec{
		Version:           hub.Spec.Version,
		KubernetesVersion: k.Version,
		Repository:        k.ImageRepository,
		NodeImageRef:      kept.NodeImageRef,
	}
	// The images v1alpha3 has no field for come back in their place; the four it has come from
	// the hub, which may have changed them.
	known := map[string]*v1alpha3.ContainerImageInfo{imageEtcd: k.Etcd, imagePause: k.Pause, imageCoreDNS: k.CoreDNS, imageKubeVIP: k.KubeVIP}
	for _, image := range kept.Images {
		if _, ok := known[image.Name]; !ok {
			spec.Images = append(spec.Images, image)
		}
	}
	for _, name := range []string{imageEtcd, imageCoreDNS, imagePause, imageKubeVIP} {
		if info := known[name]; info != nil {
			spec.Images = append(spec.Images, ContainerImage{Name: name, Repository: info.ImageRepository, Tag: info.ImageTag})
		}
	}
	status := TanzuKubernetesReleaseStatus{Conditions: hub.Status.Conditions.DeepCopy()}
	return meta, spec, status, setConversionData(&meta, hub.Spec)
}

// setConversionData records spec, the source version's, on the converted object.
func setConversionData(meta *metav1.ObjectMeta, spec any) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[ConversionDataAnnotation] = string(data)
	return nil
}
