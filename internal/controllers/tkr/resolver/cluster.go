package resolver

import (
	"context"
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/labels"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// VariableTKRData is the ClusterClass variable the resolver fills: per Kubernetes version, the
// release's Kubernetes spec, the chosen OSImage's reference and labels.
const VariableTKRData = "TKR_DATA"

// VariableImageRepository is TKG's ClusterClass variable of a custom image repository
// (TKG_CUSTOM_IMAGE_REPOSITORY): {host, tlsCertificateValidation}. Set on a Cluster, its host
// replaces the release's image repository in TKR_DATA, as TKG's resolver does, so that kubeadm
// pulls the Kubernetes images from the copy.
const VariableImageRepository = "imageRepository"

// TKRData is one entry of TKR_DATA.
type TKRData struct {
	KubernetesSpec runv1alpha3.KubernetesSpec `json:"kubernetesSpec"`
	OSImageRef     runv1alpha3.JSONObject     `json:"osImageRef"`
	Labels         map[string]string          `json:"labels"`
}

// ClusterDefaulter resolves a topology Cluster's release on admission, for Clusters whose
// Cluster or ClusterClass carries run.tanzu.vmware.com/resolve-tkr.
type ClusterDefaulter struct {
	Client client.Reader
}

var _ admission.Defaulter[*clusterv1.Cluster] = &ClusterDefaulter{}

// SetupWebhookWithManager registers the defaulter as a mutating webhook on Clusters.
func (d *ClusterDefaulter) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &clusterv1.Cluster{}).WithDefaulter(d).Complete()
}

// Default sets the label run.tanzu.vmware.com/tkr, the full Kubernetes version and TKR_DATA,
// or denies with what was asked and why each release was rejected.
func (d *ClusterDefaulter) Default(ctx context.Context, cluster *clusterv1.Cluster) error {
	topology := &cluster.Spec.Topology
	if topology.ClassRef.Name == "" {
		return nil
	}
	q, ok, err := ClusterQuery(ctx, d.Client, cluster, topology.Version)
	if err != nil || !ok {
		return err
	}
	if current, ok := cluster.Labels[runv1alpha3.LabelTKR]; ok && d.stillResolved(ctx, current, topology.Version) {
		return nil
	}
	tkrs, images, err := List(ctx, d.Client)
	if err != nil {
		return err
	}
	res, err := Resolve(tkrs, images, q)
	if err != nil {
		return err
	}
	return apply(cluster, res)
}

// ClusterQuery returns what a topology Cluster asks for, with the given version (a prefix, a full
// version or a TKR name) in place of its spec.topology.version; ok is false when neither the
// Cluster nor its ClusterClass carries run.tanzu.vmware.com/resolve-tkr.
func ClusterQuery(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster, version string) (Query, bool, error) {
	selector, ok, err := tkrSelector(ctx, c, cluster)
	if err != nil || !ok {
		return Query{}, false, err
	}
	q, err := query(cluster, version, selector)
	return q, err == nil, err
}

// tkrSelector reads resolve-tkr from the Cluster, else from its ClusterClass.
func tkrSelector(ctx context.Context, c client.Reader, cluster *clusterv1.Cluster) (labels.Selector, bool, error) {
	value, ok := cluster.Annotations[runv1alpha3.AnnotationResolveTKR]
	if !ok {
		class := &clusterv1.ClusterClass{}
		ns := cluster.Spec.Topology.ClassRef.Namespace
		if ns == "" {
			ns = cluster.Namespace
		}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: cluster.Spec.Topology.ClassRef.Name}, class); err != nil {
			return nil, false, client.IgnoreNotFound(err)
		}
		if value, ok = class.Annotations[runv1alpha3.AnnotationResolveTKR]; !ok {
			return nil, false, nil
		}
	}
	selector, err := labels.Parse(value)
	if err != nil {
		return nil, false, fmt.Errorf("annotation %s: invalid label selector %q: %w", runv1alpha3.AnnotationResolveTKR, value, err)
	}
	return selector, true, nil
}

// stillResolved reports whether the Cluster's release still gives its version, so that an
// update that does not change the version keeps the release.
func (d *ClusterDefaulter) stillResolved(ctx context.Context, name, version string) bool {
	t := &runv1alpha3.TanzuKubernetesRelease{}
	if err := d.Client.Get(ctx, client.ObjectKey{Name: name}, t); err != nil {
		return false
	}
	return t.Spec.Kubernetes.Version == version
}

func query(cluster *clusterv1.Cluster, version string, tkrSelector labels.Selector) (Query, error) {
	topology := cluster.Spec.Topology
	part := func(annotations map[string]string, where string) (*OSImageQuery, error) {
		osSelector := labels.Everything()
		if v, ok := annotations[runv1alpha3.AnnotationResolveOSImage]; ok {
			s, err := labels.Parse(v)
			if err != nil {
				return nil, fmt.Errorf("%s annotation %s: invalid label selector %q: %w", where, runv1alpha3.AnnotationResolveOSImage, v, err)
			}
			osSelector = s
		}
		return &OSImageQuery{K8sVersionPrefix: version, TKRSelector: tkrSelector, OSImageSelector: osSelector}, nil
	}
	cp, err := part(topology.ControlPlane.Metadata.Annotations, "spec.topology.controlPlane.metadata")
	if err != nil {
		return Query{}, err
	}
	q := Query{ControlPlane: cp}
	for i, md := range topology.Workers.MachineDeployments {
		p, err := part(md.Metadata.Annotations, fmt.Sprintf("spec.topology.workers.machineDeployments[%d].metadata", i))
		if err != nil {
			return Query{}, err
		}
		q.MachineDeployments = append(q.MachineDeployments, p)
	}
	return q, nil
}

// apply writes the resolution into the Cluster.
func apply(cluster *clusterv1.Cluster, res *Result) error {
	if cluster.Labels == nil {
		cluster.Labels = map[string]string{}
	}
	cluster.Labels[runv1alpha3.LabelTKR] = res.TKR.Name
	cluster.Spec.Topology.Version = res.TKR.Spec.Kubernetes.Version
	custom, err := customImageRepository(cluster)
	if err != nil {
		return err
	}
	cp, err := tkrData(res.TKR, res.ControlPlane[0], custom)
	if err != nil {
		return err
	}
	SetVariable(&cluster.Spec.Topology.Variables, VariableTKRData, cp)
	for i := range cluster.Spec.Topology.Workers.MachineDeployments {
		md := &cluster.Spec.Topology.Workers.MachineDeployments[i]
		data, err := tkrData(res.TKR, res.MachineDeployments[i][0], custom)
		if err != nil {
			return err
		}
		SetVariable(&md.Variables.Overrides, VariableTKRData, data)
	}
	return nil
}

// customImageRepository returns the host of the Cluster's imageRepository variable, "" when it
// names none.
func customImageRepository(cluster *clusterv1.Cluster) (string, error) {
	raw, ok := Variable(cluster.Spec.Topology.Variables, VariableImageRepository)
	if !ok || len(raw.Raw) == 0 {
		return "", nil
	}
	var v struct {
		Host string `json:"host"`
	}
	if err := json.Unmarshal(raw.Raw, &v); err != nil {
		return "", fmt.Errorf("variable %s of Cluster %s is not {host, tlsCertificateValidation}: %w", VariableImageRepository, cluster.Name, err)
	}
	return v.Host, nil
}

// withImageRepository returns spec with every image in repository, when one is given: the
// release's and each image's own.
func withImageRepository(spec runv1alpha3.KubernetesSpec, repository string) runv1alpha3.KubernetesSpec {
	if repository == "" {
		return spec
	}
	spec = *spec.DeepCopy()
	spec.ImageRepository = repository
	for _, image := range []*runv1alpha3.ContainerImageInfo{spec.Etcd, spec.Pause, spec.CoreDNS, spec.KubeVIP} {
		if image != nil {
			image.ImageRepository = repository
		}
	}
	return spec
}

func tkrData(t *runv1alpha3.TanzuKubernetesRelease, image *runv1alpha3.OSImage, repository string) (apiextensionsv1.JSON, error) {
	data := map[string]TKRData{t.Spec.Kubernetes.Version: {
		KubernetesSpec: withImageRepository(t.Spec.Kubernetes, repository),
		OSImageRef:     image.Spec.Image.Ref,
		Labels: map[string]string{
			runv1alpha3.LabelTKR: t.Name, runv1alpha3.LabelOSImage: image.Name,
			"os-name": image.Spec.OS.Name, "os-version": image.Spec.OS.Version, "os-arch": image.Spec.OS.Arch,
			"os-type": image.Spec.OS.Type, "image-type": image.Spec.Image.Type,
		},
	}}
	raw, err := json.Marshal(data)
	return apiextensionsv1.JSON{Raw: raw}, err
}

// Variable returns the value of the topology variable name among vars.
func Variable(vars []clusterv1.ClusterVariable, name string) (apiextensionsv1.JSON, bool) {
	for _, v := range vars {
		if v.Name == name {
			return v.Value, true
		}
	}
	return apiextensionsv1.JSON{}, false
}

// SetVariable sets the topology variable name among vars, adding it when missing.
func SetVariable(vars *[]clusterv1.ClusterVariable, name string, value apiextensionsv1.JSON) {
	for i := range *vars {
		if (*vars)[i].Name == name {
			(*vars)[i].Value = value
			return
		}
	}
	*vars = append(*vars, clusterv1.ClusterVariable{Name: name, Value: value})
}

func pointers[T any](items []T) []*T {
	out := make([]*T, len(items))
	for i := range items {
		out[i] = &items[i]
	}
	return out
}

// List returns every release and OSImage, for Resolve and Candidates.
func List(ctx context.Context, c client.Reader) ([]*runv1alpha3.TanzuKubernetesRelease, []*runv1alpha3.OSImage, error) {
	tkrs := &runv1alpha3.TanzuKubernetesReleaseList{}
	if err := c.List(ctx, tkrs); err != nil {
		return nil, nil, fmt.Errorf("failed to list TanzuKubernetesReleases: %w", err)
	}
	images := &runv1alpha3.OSImageList{}
	if err := c.List(ctx, images); err != nil {
		return nil, nil, fmt.Errorf("failed to list OSImages: %w", err)
	}
	return pointers(tkrs.Items), pointers(images.Items), nil
}
