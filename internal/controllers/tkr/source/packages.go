package source

import (
	"context"
	"fmt"
	"os"
	"time"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	"github.com/slipway-dev/slipway/internal/controllers/eventonce"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// PackageReconciler installs TKR Packages: it fetches and templates the Package's bundle as an
// App would, and applies what it holds. TanzuKubernetesReleases and OSImages are cluster-scoped;
// everything else (ClusterBootstrapTemplate, the bootstrap Packages, *Config templates) goes to
// the Package's namespace. Objects a newer version of the package drops are pruned. A Package is
// installed when it appears (at each start too) and when its spec changes; installing what is
// already there changes nothing and records no change, so no mark of an earlier pass is kept.
type PackageReconciler struct {
	Client    client.Client
	Namespace string
	// Trust is how registries are trusted (tkr-controller-config); nil trusts the system's CAs.
	Trust *fetch.ConfigTrust
	// Recorder records a Warning on a Package that cannot be installed; the manager's when nil.
	Recorder events.EventRecorder
	warnings eventonce.Warnings
}

// ReasonTKRPackageInstallFailed is the Warning of a TKR Package that could not be installed (its bundle
// not fetched, not templated or not applied); the note says why, and it is tried again.
const ReasonTKRPackageInstallFailed = "TKRPackageInstallFailed"

// SetupWithManager registers the reconciler for TKR Packages of its namespace.
func (r *PackageReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("tkr-source-controller")
	}
	isTKRPackage := predicate.NewPredicateFuncs(func(o client.Object) bool {
		_, ok := o.GetLabels()[tkg.LabelTKRPackage]
		return ok && o.GetNamespace() == r.Namespace
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("tkr_source").
		For(&datapkgingv1alpha1.Package{}, builder.WithPredicates(isTKRPackage, predicate.GenerationChangedPredicate{})).
		Complete(r)
}

// Reconcile installs one TKR Package.
func (r *PackageReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pkg := &datapkgingv1alpha1.Package{}
	if err := r.Client.Get(ctx, req.NamespacedName, pkg); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !pkg.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if err := r.install(ctx, pkg); err != nil {
		r.warnings.Warn(r.Recorder, pkg, nil, ReasonTKRPackageInstallFailed, "Install", "Failed to install release %s: %v", pkg.Spec.Version, err)
		return ctrl.Result{}, fmt.Errorf("failed to install TKR Package %s: %w", klog.KObj(pkg), err)
	}
	r.warnings.Clear(pkg)
	ctrl.LoggerFrom(ctx).Info("Installed TKR Package", "Package", klog.KObj(pkg), "version", pkg.Spec.Version)
	return ctrl.Result{}, nil
}

func (r *PackageReconciler) install(ctx context.Context, pkg *datapkgingv1alpha1.Package) error {
	spec := pkg.Spec.Template.Spec
	if spec == nil {
		return fmt.Errorf("spec.template.spec is empty")
	}
	dir, err := os.MkdirTemp("", "slipway-tkr-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	transport, err := r.Trust.Transport(ctx)
	if err != nil {
		return err
	}
	if err := fetch.Fetch(ctx, r.Client, pkg.Namespace, spec.Fetch, dir, transport); err != nil {
		return err
	}
	out, err := template.Template(ctx, r.Client, pkg.Namespace, spec.Template, dir)
	if err != nil {
		return err
	}
	objs, err := deploy.Parse(out)
	if err != nil {
		return err
	}
	for _, o := range objs {
		if clusterScoped(o) {
			o.SetNamespace("")
		} else {
			o.SetNamespace(pkg.Namespace)
		}
	}
	target := deploy.Target{Client: r.Client, Namespace: pkg.Namespace}
	_, err = deploy.Apply(ctx, target, deploy.AppName("tkr-"+tkg.VersionLabel(pkg.Spec.Version)), objs, time.Minute)
	return err
}

func clusterScoped(o *unstructured.Unstructured) bool {
	switch o.GetKind() {
	case "TanzuKubernetesRelease", "OSImage":
		return true
	}
	return false
}
