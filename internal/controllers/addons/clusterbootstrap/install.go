package clusterbootstrap

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	"sigs.k8s.io/cluster-api/util/secret"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	vendirversions "github.com/vmware-tanzu/carvel-vendir/pkg/vendir/versions/v1alpha1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// errWaiting says what a package waits for before it can be installed.
type errWaiting struct{ what string }

func (e *errWaiting) Error() string { return "waiting for " + e.what }

// valuesSecret returns the name of the Secret, in the cluster's namespace, that holds a
// package's values, or "" when the package takes none.
func (r *Reconciler) valuesSecret(ctx context.Context, cluster *clusterv1.Cluster, pkg *runv1alpha3.ClusterBootstrapPackage, p *datapkgingv1alpha1.Package) (string, error) {
	vf := pkg.ValuesFrom
	switch {
	case vf == nil:
		return "", nil
	case vf.Inline != nil:
		return tkg.PackageConfigName(cluster.Name, p.Spec.RefName), nil
	case vf.SecretRef != "":
		return vf.SecretRef, nil
	case vf.ProviderRef != nil:
		provider, err := r.providerObject(vf.ProviderRef)
		if err != nil {
			return "", err
		}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: vf.ProviderRef.Name}, provider); err != nil {
			return "", fmt.Errorf("package %s: %s %s: %w", pkg.RefName, vf.ProviderRef.Kind, klog.KRef(cluster.Namespace, vf.ProviderRef.Name), err)
		}
		name, _, _ := unstructured.NestedString(provider.Object, "status", "secretRef")
		if name == "" {
			return "", &errWaiting{fmt.Sprintf("%s %s/%s to write its values Secret (status.secretRef)", vf.ProviderRef.Kind, cluster.Namespace, vf.ProviderRef.Name)}
		}
		return name, nil
	}
	return "", fmt.Errorf("package %s: valuesFrom sets none of inline, secretRef and providerRef", pkg.RefName)
}

// packageRef selects exactly a Package's version, prereleases included.
func packageRef(p *datapkgingv1alpha1.Package) *pkgingv1alpha1.PackageRef {
	return &pkgingv1alpha1.PackageRef{RefName: p.Spec.RefName, VersionSelection: &vendirversions.VersionSelectionSemver{
		Constraints: p.Spec.Version, Prereleases: &vendirversions.VersionSelectionSemverPrereleases{}}}
}

func clusterAnnotations(pi *pkgingv1alpha1.PackageInstall, cluster *clusterv1.Cluster) {
	if pi.Annotations == nil {
		pi.Annotations = map[string]string{}
	}
	pi.Annotations[tkg.AnnotationClusterName] = cluster.Name
	pi.Annotations[tkg.AnnotationClusterNamespace] = cluster.Namespace
}

// installKappController makes the PackageInstall, in the cluster's namespace on the management
// cluster, that deploys kapp-controller into the workload cluster through its kubeconfig Secret.
// noopDelete leaves kapp-controller running when the PackageInstall goes.
func (r *Reconciler) installKappController(ctx context.Context, cluster *clusterv1.Cluster, cb *runv1alpha3.ClusterBootstrap) error {
	if cb.Spec.Kapp == nil {
		return fmt.Errorf("ClusterBootstrap %s has no kapp package", klog.KObj(cb))
	}
	p, err := r.lookupPackage(ctx, cluster.Namespace, cb.Spec.Kapp.RefName)
	if err != nil {
		return err
	}
	values, err := r.valuesSecret(ctx, cluster, cb.Spec.Kapp, p)
	if err != nil {
		return err
	}
	pi := &pkgingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: tkg.PackageInstallName(cluster.Name, p.Spec.RefName)}}
	_, err = controllerutil.CreateOrPatch(ctx, r.Client, pi, func() error {
		clusterAnnotations(pi, cluster)
		pi.OwnerReferences = util.EnsureOwnerRef(pi.OwnerReferences, clusterOwner(cluster))
		pi.Spec.NoopDelete = true
		pi.Spec.SyncPeriod = &metav1.Duration{Duration: addons.PackageInstallSyncPeriod}
		pi.Spec.PackageRef = packageRef(p)
		pi.Spec.Cluster = &kappctrlv1alpha1.AppCluster{KubeconfigSecretRef: &kappctrlv1alpha1.AppClusterKubeconfigSecretRef{
			Name: secret.Name(cluster.Name, secret.Kubeconfig), Key: secret.KubeconfigDataName}}
		pi.Spec.Values = nil
		if values != "" {
			pi.Spec.Values = []pkgingv1alpha1.PackageInstallValues{{SecretRef: &pkgingv1alpha1.PackageInstallValuesSecretRef{Name: values}}}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to write PackageInstall %s: %w", klog.KObj(pi), err)
	}
	return nil
}

// prepareRemote makes the system namespace and the service account, with its cluster role,
// that the workload cluster's kapp-controller installs the packages as.
func (r *Reconciler) prepareRemote(ctx context.Context, remote client.Client) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.SystemNamespace}}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: r.SystemNamespace, Name: addons.ServiceAccount}}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: addons.ClusterRole}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: addons.ClusterRoleBinding}}
	for _, step := range []struct {
		obj    client.Object
		mutate func() error
	}{
		{ns, func() error { return nil }},
		{sa, func() error { return nil }},
		{role, func() error {
			role.Rules = []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}
			return nil
		}},
		{binding, func() error {
			binding.Subjects = []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: r.SystemNamespace, Name: addons.ServiceAccount}}
			binding.RoleRef = rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: addons.ClusterRole}
			return nil
		}},
	} {
		if _, err := controllerutil.CreateOrPatch(ctx, remote, step.obj, step.mutate); err != nil {
			return fmt.Errorf("failed to write %T %s on the workload cluster: %w", step.obj, step.obj.GetName(), err)
		}
	}
	return nil
}

// installRemote puts one package on the workload cluster: its Package object, its values
// Secret {cluster}-{short}-data-values and its PackageInstall {cluster}-{short}, all in the
// system namespace.
func (r *Reconciler) installRemote(ctx context.Context, cluster *clusterv1.Cluster, pkg *runv1alpha3.ClusterBootstrapPackage, remote client.Client) error {
	p, err := r.lookupPackage(ctx, cluster.Namespace, pkg.RefName)
	if err != nil {
		return err
	}
	remotePkg := &datapkgingv1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: r.SystemNamespace, Name: p.Name}}
	if _, err := controllerutil.CreateOrPatch(ctx, remote, remotePkg, func() error {
		remotePkg.Spec = *p.Spec.DeepCopy()
		return nil
	}); err != nil {
		return remoteWriteError(cluster, "Package "+p.Name, err)
	}
	valuesName, err := r.valuesSecret(ctx, cluster, pkg, p)
	if err != nil {
		return err
	}
	var remoteValues string
	if valuesName != "" {
		local := &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cluster.Namespace, Name: valuesName}, local); err != nil {
			return fmt.Errorf("package %s: values Secret %s: %w", pkg.RefName, klog.KRef(cluster.Namespace, valuesName), err)
		}
		if local.Labels[tkg.LabelClusterName] != cluster.Name {
			// Labelled, a change of the Secret brings the Cluster back.
			patch := client.MergeFrom(local.DeepCopy())
			local.Labels = mergeLabels(local.Labels, packageLabels(cluster, pkg))
			if err := r.Client.Patch(ctx, local, patch); err != nil {
				return err
			}
		}
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: r.SystemNamespace, Name: tkg.DataValuesSecretName(cluster.Name, p.Spec.RefName)}}
		if _, err := controllerutil.CreateOrPatch(ctx, remote, s, func() error {
			// The type is set on creation only: on a management cluster that manages itself
			// this is the *Config controller's Secret (see configs.Config.Reconcile).
			if s.CreationTimestamp.IsZero() {
				s.Type = corev1.SecretTypeOpaque
			}
			s.Data = local.Data
			return nil
		}); err != nil {
			return fmt.Errorf("failed to write Secret %s on the workload cluster: %w", s.Name, err)
		}
		remoteValues = s.Name
	}
	pi := &pkgingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: r.SystemNamespace, Name: tkg.PackageInstallName(cluster.Name, p.Spec.RefName)}}
	if _, err := controllerutil.CreateOrPatch(ctx, remote, pi, func() error {
		clusterAnnotations(pi, cluster)
		pi.Spec.ServiceAccountName = addons.ServiceAccount
		pi.Spec.SyncPeriod = &metav1.Duration{Duration: addons.PackageInstallSyncPeriod}
		pi.Spec.PackageRef = packageRef(p)
		pi.Spec.Values = nil
		if remoteValues != "" {
			pi.Spec.Values = []pkgingv1alpha1.PackageInstallValues{{SecretRef: &pkgingv1alpha1.PackageInstallValuesSecretRef{Name: remoteValues}}}
		}
		return nil
	}); err != nil {
		return remoteWriteError(cluster, "PackageInstall "+pi.Name, err)
	}
	return nil
}

// remoteWriteError is the error of writing one of kapp-controller's objects on the workload
// cluster. Its kind not served there yet is a wait, looked at again every StatusPeriod: the
// workload cluster's kapp-controller installs its CRDs and serves Packages from its aggregated
// API once it runs, a moment after its PackageInstall on the management cluster succeeds (until
// then the API server answers 503 for that API), and a failure's backoff would have grown to
// minutes meanwhile.
func remoteWriteError(cluster *clusterv1.Cluster, what string, err error) error {
	var discovery *apiutil.ErrResourceDiscoveryFailed
	if meta.IsNoMatchError(err) || apierrors.IsServiceUnavailable(err) || errors.As(err, &discovery) {
		return &errWaiting{fmt.Sprintf("kapp-controller on cluster %s to serve its APIs (%s: %v)", klog.KObj(cluster), what, err)}
	}
	return fmt.Errorf("failed to write %s on the workload cluster: %w", what, err)
}
