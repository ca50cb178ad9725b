package packageinstall

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// desiredApp builds the App of a PackageInstall from the Package's template.
func desiredApp(pi *pkgingv1alpha1.PackageInstall, pkg *datapkgingv1alpha1.Package) kappctrlv1alpha1.AppSpec {
	spec := *pkg.Spec.Template.Spec.DeepCopy()
	spec.ServiceAccountName = pi.Spec.ServiceAccountName
	spec.Cluster = pi.Spec.Cluster.DeepCopy()
	spec.NoopDelete = pi.Spec.NoopDelete
	spec.Paused, spec.Canceled = pi.Spec.Paused, pi.Spec.Canceled
	spec.DefaultNamespace = pi.Spec.DefaultNamespace
	spec.SyncPeriod = &metav1.Duration{Duration: syncPeriod(pi)}
	// The install's values go to the first templating step, after the package's own.
	for i := range spec.Template {
		if spec.Template[i].Ytt == nil {
			continue
		}
		for _, v := range pi.Spec.Values {
			if v.SecretRef != nil {
				spec.Template[i].Ytt.ValuesFrom = append(spec.Template[i].Ytt.ValuesFrom, kappctrlv1alpha1.AppTemplateValuesSource{
					SecretRef: &kappctrlv1alpha1.AppTemplateValuesSourceRef{Name: v.SecretRef.Name},
				})
			}
		}
		break
	}
	return spec
}

// ensureApp creates or updates the App, owned by the PackageInstall.
func (r *Reconciler) ensureApp(ctx context.Context, pi *pkgingv1alpha1.PackageInstall, pkg *datapkgingv1alpha1.Package) (*kappctrlv1alpha1.App, error) {
	app := &kappctrlv1alpha1.App{ObjectMeta: metav1.ObjectMeta{Namespace: pi.Namespace, Name: pi.Name}}
	_, err := controllerutil.CreateOrPatch(ctx, r.Client, app, func() error {
		if app.Annotations == nil {
			app.Annotations = map[string]string{}
		}
		app.Annotations[AnnotationPackageRefName] = pkg.Spec.RefName
		app.Annotations[AnnotationPackageVersion] = pkg.Spec.Version
		app.Spec = desiredApp(pi, pkg)
		return controllerutil.SetControllerReference(pi, app, r.Client.Scheme())
	})
	if err != nil {
		return nil, fmt.Errorf("failed to create or update App %s: %w", app.Name, err)
	}
	return app, nil
}

// pauseApp carries paused and canceled to an existing App.
func (r *Reconciler) pauseApp(ctx context.Context, pi *pkgingv1alpha1.PackageInstall) error {
	app := &kappctrlv1alpha1.App{}
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(pi), app); err != nil {
		return client.IgnoreNotFound(err)
	}
	if app.Spec.Paused == pi.Spec.Paused && app.Spec.Canceled == pi.Spec.Canceled {
		return nil
	}
	patch := client.MergeFrom(app.DeepCopy())
	app.Spec.Paused, app.Spec.Canceled = pi.Spec.Paused, pi.Spec.Canceled
	return r.Client.Patch(ctx, app, patch)
}

// reconcileDelete deletes the App (its finalizer removes what it deployed, or keeps it with
// noopDelete), then lets the PackageInstall go.
func (r *Reconciler) reconcileDelete(ctx context.Context, pi *pkgingv1alpha1.PackageInstall, status *pkgingv1alpha1.PackageInstallStatus) (ctrl.Result, error) {
	app := &kappctrlv1alpha1.App{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(pi), app)
	switch {
	case apierrors.IsNotFound(err):
		patch := client.MergeFrom(pi.DeepCopy())
		controllerutil.RemoveFinalizer(pi, Finalizer)
		return ctrl.Result{}, r.Client.Patch(ctx, pi, patch)
	case err != nil:
		return ctrl.Result{}, err
	}
	if app.Spec.NoopDelete != pi.Spec.NoopDelete || app.Spec.ServiceAccountName != pi.Spec.ServiceAccountName {
		// Delete the way the install now says.
		patch := client.MergeFrom(app.DeepCopy())
		app.Spec.NoopDelete, app.Spec.ServiceAccountName = pi.Spec.NoopDelete, pi.Spec.ServiceAccountName
		if err := r.Client.Patch(ctx, app, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	if app.DeletionTimestamp.IsZero() {
		if err := r.Client.Delete(ctx, app); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
	}
	status.FriendlyDescription = "Deleting"
	status.Conditions = []kappctrlv1alpha1.Condition{{Type: kappctrlv1alpha1.Deleting, Status: "True"}}
	if app.Status.UsefulErrorMessage != "" {
		status.UsefulErrorMessage = app.Status.UsefulErrorMessage
	}
	return ctrl.Result{RequeueAfter: time.Second}, nil
}
