package clusterbootstrap

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// clusterOwner is the owner reference every object cloned for a cluster carries.
func clusterOwner(cluster *clusterv1.Cluster) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: clusterv1.GroupVersion.String(), Kind: "Cluster", Name: cluster.Name, UID: cluster.UID}
}

// lookupPackage finds the Package object a ClusterBootstrap package names.
func (r *Reconciler) lookupPackage(ctx context.Context, namespace, name string) (*datapkgingv1alpha1.Package, error) {
	p, err := addons.LookupPackage(ctx, r.Client, namespace, r.SystemNamespace, name)
	if err == nil && p == nil {
		err = fmt.Errorf("package %s not found in namespace %s or %s: the release's TKR package installs it", name, namespace, r.SystemNamespace)
	}
	return p, err
}

// cloneReferences copies what a package's values come from into the cluster's namespace, named
// {cluster}-{short}-package and owned by the Cluster: inline values become a Secret, a Secret
// is copied, a provider object is copied (or, when the user made one of that name already, only
// labelled and owned). The package is pointed at the copies. It returns what it made.
func (r *Reconciler) cloneReferences(ctx context.Context, cluster *clusterv1.Cluster, pkg *runv1alpha3.ClusterBootstrapPackage, sourceNamespace string) ([]client.Object, error) {
	if pkg.ValuesFrom == nil {
		return nil, nil
	}
	p, err := r.lookupPackage(ctx, cluster.Namespace, pkg.RefName)
	if err != nil {
		return nil, err
	}
	name := tkg.PackageConfigName(cluster.Name, p.Spec.RefName)
	labels := packageLabels(cluster, pkg)
	switch vf := pkg.ValuesFrom; {
	case vf.Inline != nil:
		values, err := yaml.Marshal(vf.Inline)
		if err != nil {
			return nil, fmt.Errorf("package %s: inline values: %w", pkg.RefName, err)
		}
		s, err := r.writeSecret(ctx, cluster, name, labels, map[string][]byte{addons.ValuesKey: values})
		return []client.Object{s}, err
	case vf.SecretRef != "":
		src := &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: sourceNamespace, Name: vf.SecretRef}, src); err != nil {
			return nil, fmt.Errorf("package %s: values Secret %s: %w", pkg.RefName, klog.KRef(sourceNamespace, vf.SecretRef), err)
		}
		s, err := r.writeSecret(ctx, cluster, name, labels, src.Data)
		if err != nil {
			return nil, err
		}
		vf.SecretRef = name
		return []client.Object{s}, nil
	case vf.ProviderRef != nil:
		return r.cloneProvider(ctx, cluster, pkg, sourceNamespace, name, labels)
	}
	return nil, nil
}

func (r *Reconciler) writeSecret(ctx context.Context, cluster *clusterv1.Cluster, name string, labels map[string]string, data map[string][]byte) (*corev1.Secret, error) {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name}}
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, s, func() error {
		s.Type = addons.SecretTypeClusterBootstrap
		s.Labels = mergeLabels(s.Labels, labels)
		s.OwnerReferences = util.EnsureOwnerRef(s.OwnerReferences, clusterOwner(cluster))
		s.Data = data
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to write Secret %s: %w", klog.KRef(s.Namespace, name), err)
	}
	return s, nil
}

// packageLabels are the labels of the objects that hold a cluster's package values; a change of
// a labelled Secret or provider brings the Cluster back.
func packageLabels(cluster *clusterv1.Cluster, pkg *runv1alpha3.ClusterBootstrapPackage) map[string]string {
	return map[string]string{tkg.LabelClusterName: cluster.Name, tkg.LabelPackageName: tkg.LabelValue(pkg.RefName)}
}

// adopt makes an object the user made for a cluster's package (a *Config or values Secret) the
// Cluster's: labelled and owned by it. An object another Cluster owns is refused.
func (r *Reconciler) adopt(ctx context.Context, cluster *clusterv1.Cluster, pkg *runv1alpha3.ClusterBootstrapPackage, o client.Object) error {
	if other := ownedByOtherCluster(o, cluster); other != "" {
		return fmt.Errorf("%s, named by package %s, belongs to cluster %s", klog.KObj(o), pkg.RefName, other)
	}
	patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
	o.SetLabels(mergeLabels(o.GetLabels(), packageLabels(cluster, pkg)))
	o.SetOwnerReferences(util.EnsureOwnerRef(o.GetOwnerReferences(), clusterOwner(cluster)))
	if err := r.Client.Patch(ctx, o, patch); err != nil {
		return fmt.Errorf("failed to adopt %s for cluster %s: %w", klog.KObj(o), cluster.Name, err)
	}
	return nil
}

func mergeLabels(into, from map[string]string) map[string]string {
	if into == nil {
		into = map[string]string{}
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}

// providerObject returns an empty object of a providerRef's kind, in its preferred version.
func (r *Reconciler) providerObject(ref *corev1.TypedLocalObjectReference) (*unstructured.Unstructured, error) {
	group := ptr.Deref(ref.APIGroup, "")
	mapping, err := r.Client.RESTMapper().RESTMapping(schema.GroupKind{Group: group, Kind: ref.Kind})
	if err != nil {
		return nil, fmt.Errorf("providerRef %s.%s: the API server does not serve this kind: %w", ref.Kind, group, err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	return u, nil
}

func (r *Reconciler) cloneProvider(ctx context.Context, cluster *clusterv1.Cluster, pkg *runv1alpha3.ClusterBootstrapPackage, sourceNamespace, name string, labels map[string]string) ([]client.Object, error) {
	ref := pkg.ValuesFrom.ProviderRef
	existing, err := r.providerObject(ref)
	if err != nil {
		return nil, err
	}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: name}, existing)
	switch {
	case err == nil:
		// A *Config the user made for this cluster beforehand is used as it is.
		if err := r.adopt(ctx, cluster, pkg, existing); err != nil {
			return nil, err
		}
		ref.Name = name
		return []client.Object{existing}, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	src, _ := r.providerObject(ref)
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: sourceNamespace, Name: ref.Name}, src); err != nil {
		return nil, fmt.Errorf("package %s: %s %s: %w", pkg.RefName, ref.Kind, klog.KRef(sourceNamespace, ref.Name), err)
	}
	clone := &unstructured.Unstructured{Object: map[string]any{"apiVersion": src.GetAPIVersion(), "kind": src.GetKind(), "spec": src.Object["spec"]}}
	clone.SetNamespace(cluster.Namespace)
	clone.SetName(name)
	clone.SetLabels(labels)
	clone.SetOwnerReferences([]metav1.OwnerReference{clusterOwner(cluster)})
	if err := r.Client.Create(ctx, clone); err != nil {
		return nil, fmt.Errorf("failed to clone %s %s: %w", ref.Kind, klog.KRef(sourceNamespace, ref.Name), err)
	}
	ref.Name = name
	made := []client.Object{clone}
	secrets, err := r.cloneLocalObjRefs(ctx, cluster, src)
	return append(made, secrets...), err
}

// cloneLocalObjRefs copies the Secrets a provider names in fields ending in LocalObjRef (such
// as a VSphereCPIConfig's vSphereCredentialLocalObjRef) into the cluster's namespace, under the
// same names.
func (r *Reconciler) cloneLocalObjRefs(ctx context.Context, cluster *clusterv1.Cluster, provider *unstructured.Unstructured) ([]client.Object, error) {
	names := localObjRefSecrets(provider)
	var made []client.Object
	for _, name := range names {
		src := &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: provider.GetNamespace(), Name: name}, src); err != nil {
			return made, fmt.Errorf("%s %s names Secret %s: %w", provider.GetKind(), klog.KObj(provider), name, err)
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: name}}
		if _, err := controllerutil.CreateOrPatch(ctx, r.Client, s, func() error {
			s.Type, s.Data = src.Type, src.Data
			s.OwnerReferences = util.EnsureOwnerRef(s.OwnerReferences, clusterOwner(cluster))
			return nil
		}); err != nil {
			return made, fmt.Errorf("failed to copy Secret %s into %s: %w", name, cluster.Namespace, err)
		}
		made = append(made, s)
	}
	return made, nil
}

// localObjRefSecrets are the names of the Secrets a provider names in fields ending in
// LocalObjRef.
func localObjRefSecrets(provider *unstructured.Unstructured) []string {
	var names []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if ref, ok := child.(map[string]any); ok && strings.HasSuffix(k, "LocalObjRef") && ref["kind"] == "Secret" {
					if name, ok := ref["name"].(string); ok {
						names = append(names, name)
					}
					continue
				}
				walk(child)
			}
		case []any:
			for _, child := range v {
				walk(child)
			}
		}
	}
	walk(provider.Object["spec"])
	return names
}

func ownedByOtherCluster(o client.Object, cluster *clusterv1.Cluster) string {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Cluster" && ref.Name != cluster.Name {
			return ref.Name
		}
	}
	return ""
}

// reconcileOwners gives back their owners to what the controller made for the cluster, when
// something removed them, as Cluster API's resilience contract asks (a restore drops owner
// references): the ClusterBootstrap its Cluster, as controller, written by the deferred patch;
// the values Secrets and *Configs cloned for its packages ({cluster}-{short}-package) the
// Cluster and the ClusterBootstrap. Without them the clones would outlive the cluster, and a
// ClusterBootstrap whose status is lost would be taken for a user's. An object the user made and
// named otherwise, another Cluster's, or a release's template is left alone.
func (r *Reconciler) reconcileOwners(ctx context.Context, s *scope) error {
	s.cb.OwnerReferences = util.EnsureOwnerRef(s.cb.OwnerReferences, clusterController(s.cluster))
	for _, p := range addons.Packages(s.cb.Spec) {
		// Inline values are written to a Secret of that name; a Secret or provider is cloned
		// under it.
		name := tkg.PackageConfigName(s.cluster.Name, p.RefName)
		var o client.Object
		switch vf := p.ValuesFrom; {
		case vf == nil || s.foreign[p.RefName]:
			continue
		case vf.Inline != nil || vf.SecretRef == name:
			o = &corev1.Secret{}
		case vf.ProviderRef != nil && vf.ProviderRef.Name == name:
			u, err := r.providerObject(vf.ProviderRef)
			if err != nil {
				return err
			}
			o = u
		default:
			continue
		}
		if err := r.giveOwnersBack(ctx, s, name, o); err != nil {
			return err
		}
		// Only a provider naming Secrets had any copied with it: the release's template is read
		// for those alone, not on every pass of every cluster.
		if u, provider := o.(*unstructured.Unstructured); !provider || len(localObjRefSecrets(u)) == 0 {
			continue
		}
		copies, err := r.copiedSecrets(ctx, s, p)
		if err != nil {
			return err
		}
		for _, c := range copies {
			if err := r.ensureOwners(ctx, c, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// giveOwnersBack reads the object of a name in the cluster's namespace into o and makes the
// Cluster and the ClusterBootstrap its owners, unless it is not there, another Cluster owns it or
// it is a release's template.
func (r *Reconciler) giveOwnersBack(ctx context.Context, s *scope, name string, o client.Object) error {
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: name}, o); apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return fmt.Errorf("failed to read %s of cluster %s: %w", klog.KRef(s.cluster.Namespace, name), s.cluster.Name, err)
	}
	if ownedByOtherCluster(o, s.cluster) != "" || isTemplate(o) {
		return nil
	}
	return r.ensureOwners(ctx, o, s)
}

// ensureOwners makes the Cluster and the ClusterBootstrap owners of o, beside its other owners.
func (r *Reconciler) ensureOwners(ctx context.Context, o client.Object, s *scope) error {
	cluster, cb := clusterOwner(s.cluster), clusterBootstrapOwner(s.cb)
	if util.HasOwnerRef(o.GetOwnerReferences(), cluster) && util.HasOwnerRef(o.GetOwnerReferences(), cb) {
		return nil
	}
	patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
	o.SetOwnerReferences(util.EnsureOwnerRef(util.EnsureOwnerRef(o.GetOwnerReferences(), cluster), cb))
	if err := r.Client.Patch(ctx, o, patch); err != nil {
		return fmt.Errorf("failed to give %s back its owners, Cluster and ClusterBootstrap %s: %w", klog.KObj(o), s.cluster.Name, err)
	}
	return nil
}

// copiedSecrets are the Secrets of the cluster's namespace that cloneLocalObjRefs copied for a
// package when it cloned the release template's provider: named as that provider names them, and
// holding the template's data still. A Secret of the same name that holds other data is the
// user's, or was edited, and is left as it is: owning it would delete it with the cluster. Several
// clusters of a namespace share a copy, each an owner of it.
func (r *Reconciler) copiedSecrets(ctx context.Context, s *scope, p *runv1alpha3.ClusterBootstrapPackage) ([]*corev1.Secret, error) {
	if s.cluster.Namespace == r.SystemNamespace {
		return nil, nil // the template's own Secrets, never copies
	}
	cbt := &runv1alpha3.ClusterBootstrapTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.SystemNamespace, Name: s.tkrName}, cbt); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to read ClusterBootstrapTemplate %s: %w", klog.KRef(r.SystemNamespace, s.tkrName), err)
	}
	var ref *corev1.TypedLocalObjectReference
	for _, tp := range addons.Packages(cbt.Spec) {
		if tkg.ShortName(tp.RefName) == tkg.ShortName(p.RefName) && tp.ValuesFrom != nil {
			ref = tp.ValuesFrom.ProviderRef
		}
	}
	if ref == nil {
		return nil, nil
	}
	provider, err := r.providerObject(ref)
	if err != nil {
		return nil, err
	}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.SystemNamespace, Name: ref.Name}, provider); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("failed to read %s %s of release %s: %w", ref.Kind, klog.KRef(r.SystemNamespace, ref.Name), s.tkrName, err)
	}
	var copies []*corev1.Secret
	for _, name := range localObjRefSecrets(provider) {
		src, cp := &corev1.Secret{}, &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.SystemNamespace, Name: name}, src); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("failed to read Secret %s, which %s names: %w", klog.KRef(r.SystemNamespace, name), klog.KObj(provider), err)
		}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.cluster.Namespace, Name: name}, cp); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("failed to read Secret %s, copied for cluster %s: %w", klog.KRef(s.cluster.Namespace, name), s.cluster.Name, err)
		}
		if reflect.DeepEqual(src.Data, cp.Data) {
			copies = append(copies, cp)
		}
	}
	return copies, nil
}

// clusterBootstrapOwner is the owner reference of the objects cloned for a ClusterBootstrap.
func clusterBootstrapOwner(cb *runv1alpha3.ClusterBootstrap) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: runv1alpha3.GroupVersion.String(), Kind: "ClusterBootstrap", Name: cb.Name, UID: cb.UID}
}

// ownByClusterBootstrap makes the ClusterBootstrap an owner of the objects cloned for it.
func (r *Reconciler) ownByClusterBootstrap(ctx context.Context, cb *runv1alpha3.ClusterBootstrap, objs []client.Object) error {
	owner := clusterBootstrapOwner(cb)
	for _, o := range objs {
		patch := client.MergeFrom(o.DeepCopyObject().(client.Object))
		o.SetOwnerReferences(util.EnsureOwnerRef(o.GetOwnerReferences(), owner))
		if err := r.Client.Patch(ctx, o, patch); err != nil {
			return fmt.Errorf("failed to make ClusterBootstrap %s an owner of %s: %w", cb.Name, o.GetName(), err)
		}
	}
	return nil
}
