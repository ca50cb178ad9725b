package packaging

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	vendirversions "github.com/vmware-tanzu/carvel-vendir/pkg/vendir/versions/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Annotations the tanzu CLI puts on what it creates for an installed package.
const (
	AnnotationCreatedFor = "tkg.tanzu.vmware.com/tanzu-package"
)

// InstallOptions are what `package installed create` and `update` take.
type InstallOptions struct {
	Name, Namespace, PackageName, Version string
	// Values is a YAML document of values (the content of `--values-file`); nil keeps the
	// values an install has.
	Values []byte
	// ServiceAccountName is used instead of creating one.
	ServiceAccountName string
	CreateNamespace    bool
	Wait               bool
	WaitTimeout        time.Duration
	// Install makes InstalledUpdate install a package that is not installed (`--install`).
	Install bool
}

// InstalledRow is one line of `package installed list`.
type InstalledRow struct {
	Name, PackageName, PackageVersion, Status, Namespace string
}

func createdName(name, namespace, suffix string) string {
	return fmt.Sprintf("%s-%s-%s", name, namespace, suffix)
}

// InstalledCreate installs a package: a service account with cluster-admin rights (as the tanzu
// CLI creates one), a values Secret from the file, and the PackageInstall. Everything is checked
// before anything is written, and what it wrote is removed when a later write fails.
func (c *Client) InstalledCreate(ctx context.Context, o InstallOptions) (err error) {
	if o.PackageName == "" {
		return field.Required(field.NewPath("packageName"), "`slipway package available list` shows the packages")
	}
	if o.Version == "" {
		return field.Required(field.NewPath("version"), "`slipway package available list "+o.PackageName+"` shows its versions")
	}
	existing := &pkgingv1alpha1.PackageInstall{}
	if err := c.C.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, existing); err == nil {
		return fmt.Errorf("package install '%s' already exists in namespace '%s': use `slipway package installed update`", o.Name, o.Namespace)
	}
	if pkgs, err := c.packagesOf(ctx, o.PackageName, o.Namespace); err != nil {
		return err
	} else if len(pkgs) == 0 {
		return fmt.Errorf("package '%s' is not available in namespace '%s': `slipway package available list -n %s` shows what is, and `slipway package repository add` adds a repository", o.PackageName, o.Namespace, o.Namespace)
	}
	var created []client.Object
	defer func() {
		if err == nil {
			return
		}
		for i := len(created) - 1; i >= 0; i-- {
			if derr := c.C.Delete(context.WithoutCancel(ctx), created[i]); client.IgnoreNotFound(derr) != nil {
				err = fmt.Errorf("%w; removing %s: %v", err, created[i].GetName(), derr)
			}
		}
	}()
	if o.CreateNamespace {
		ns, err := c.ensureNamespace(ctx, o.Namespace)
		if err != nil {
			return err
		}
		if ns != nil {
			created = append(created, ns)
		}
	}
	c.Progress.Infof("Installing package '%s'", o.PackageName)
	sa := o.ServiceAccountName
	if sa == "" {
		sa = createdName(o.Name, o.Namespace, "sa")
		objs, err := c.ensureServiceAccount(ctx, o.Name, o.Namespace, sa)
		created = append(created, objs...)
		if err != nil {
			return err
		}
	}
	pi := &pkgingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	objs, err := c.applyInstall(ctx, pi, o, sa)
	created = append(created, objs...)
	if err != nil {
		return err
	}
	// Written: a failure from here on is the package's, which its status says; nothing is removed.
	created = nil
	return c.waitInstalled(ctx, o, "Added installed package")
}

// InstalledUpdate changes the version or values of an installed package.
func (c *Client) InstalledUpdate(ctx context.Context, o InstallOptions) error {
	pi := &pkgingv1alpha1.PackageInstall{}
	if err := c.C.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.Name}, pi); err != nil {
		if apierrors.IsNotFound(err) && o.Install {
			return c.InstalledCreate(ctx, o)
		}
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("installed package '%s' is not in namespace '%s': add --install (with --package and --version) to install it", o.Name, o.Namespace)
		}
		return fmt.Errorf("failed to find installed package '%s' in namespace '%s': %w", o.Name, o.Namespace, err)
	}
	if o.PackageName == "" && pi.Spec.PackageRef != nil {
		o.PackageName = pi.Spec.PackageRef.RefName
	}
	if o.Version == "" && pi.Spec.PackageRef != nil && pi.Spec.PackageRef.VersionSelection != nil {
		o.Version = pi.Spec.PackageRef.VersionSelection.Constraints
	}
	c.Progress.Infof("Updating installed package '%s'", o.Name)
	if _, err := c.applyInstall(ctx, pi, o, pi.Spec.ServiceAccountName); err != nil {
		return err
	}
	return c.waitInstalled(ctx, o, "Updated installed package")
}

// applyInstall writes the values Secret and the PackageInstall, and returns those it created.
func (c *Client) applyInstall(ctx context.Context, pi *pkgingv1alpha1.PackageInstall, o InstallOptions, sa string) ([]client.Object, error) {
	var created []client.Object
	var values []pkgingv1alpha1.PackageInstallValues
	if o.Values != nil {
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: createdName(o.Name, o.Namespace, "values")}}
		result, err := controllerutil.CreateOrUpdate(ctx, c.C, secret, func() error {
			secret.Annotations = map[string]string{AnnotationCreatedFor: o.Name + "-" + o.Namespace}
			secret.Data = map[string][]byte{"values.yaml": o.Values}
			return nil
		})
		if err != nil {
			return created, fmt.Errorf("failed to write the values Secret: %w", err)
		}
		if result == controllerutil.OperationResultCreated {
			created = append(created, secret)
		}
		values = []pkgingv1alpha1.PackageInstallValues{{SecretRef: &pkgingv1alpha1.PackageInstallValuesSecretRef{Name: secret.Name}}}
	}
	result, err := controllerutil.CreateOrUpdate(ctx, c.C, pi, func() error {
		pi.Spec.ServiceAccountName = sa
		pi.Spec.PackageRef = &pkgingv1alpha1.PackageRef{RefName: o.PackageName,
			VersionSelection: &vendirversions.VersionSelectionSemver{Constraints: o.Version}}
		if values != nil {
			pi.Spec.Values = values
		}
		return nil
	})
	if err != nil {
		return created, fmt.Errorf("failed to write PackageInstall %s: %w", o.Name, err)
	}
	if result == controllerutil.OperationResultCreated {
		created = append(created, pi)
	}
	return created, nil
}

func (c *Client) waitInstalled(ctx context.Context, o InstallOptions, done string) error {
	if !o.Wait {
		return nil
	}
	c.Progress.Infof("Waiting for 'PackageInstall' reconciliation for '%s'", o.Name)
	if err := c.WaitReconciled(ctx, o.Name, o.Namespace, o.WaitTimeout, false); err != nil {
		return err
	}
	c.Progress.Infof("%s '%s' in namespace '%s'", done, o.Name, o.Namespace)
	return nil
}

// WaitReconciled waits until an installed package has reconciled its current generation; it
// returns the package's useful error message when it fails, or, with retryFailures, when it is
// still failing at the timeout.
func (c *Client) WaitReconciled(ctx context.Context, name, namespace string, timeout time.Duration, retryFailures bool) error {
	return c.waitFor(ctx, "package install "+name, timeout, retried{retryUntilTimeout: retryFailures}, func(ctx context.Context) (kappctrlv1alpha1.GenericStatus, int64, int, error) {
		pi := &pkgingv1alpha1.PackageInstall{}
		err := c.C.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pi)
		return pi.Status.GenericStatus, pi.Generation, 0, err
	})
}

// ensureServiceAccount creates the service account, cluster role and binding the tanzu CLI
// creates for an install, and returns those it created.
func (c *Client) ensureServiceAccount(ctx context.Context, name, namespace, sa string) ([]client.Object, error) {
	annotations := map[string]string{AnnotationCreatedFor: name + "-" + namespace}
	role := createdName(name, namespace, "cluster-role")
	objs := []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: sa, Annotations: annotations}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role, Annotations: annotations},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: createdName(name, namespace, "cluster-rolebinding"), Annotations: annotations},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: namespace}}},
	}
	var created []client.Object
	for _, o := range objs {
		err := c.C.Create(ctx, o)
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return created, fmt.Errorf("failed to create %s: %w", o.GetName(), err)
		}
		created = append(created, o)
	}
	return created, nil
}

// InstalledList lists installed packages of a namespace ("" for all).
func (c *Client) InstalledList(ctx context.Context, namespace string) ([]InstalledRow, error) {
	list := &pkgingv1alpha1.PackageInstallList{}
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.C.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("failed to list installed packages: %w", err)
	}
	rows := make([]InstalledRow, 0, len(list.Items))
	for _, pi := range list.Items {
		rows = append(rows, installedRow(&pi))
	}
	return rows, nil
}

// InstalledGet returns one installed package.
func (c *Client) InstalledGet(ctx context.Context, name, namespace string) (InstalledRow, *pkgingv1alpha1.PackageInstall, error) {
	pi := &pkgingv1alpha1.PackageInstall{}
	if err := c.C.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, pi); err != nil {
		return InstalledRow{}, nil, fmt.Errorf("failed to find installed package '%s' in namespace '%s': %w", name, namespace, err)
	}
	return installedRow(pi), pi, nil
}

func installedRow(pi *pkgingv1alpha1.PackageInstall) InstalledRow {
	ref := ""
	if pi.Spec.PackageRef != nil {
		ref = pi.Spec.PackageRef.RefName
	}
	return InstalledRow{Name: pi.Name, PackageName: ref, PackageVersion: pi.Status.Version, Status: pi.Status.FriendlyDescription, Namespace: pi.Namespace}
}

// InstalledDelete uninstalls a package and removes what InstalledCreate made for it.
func (c *Client) InstalledDelete(ctx context.Context, name, namespace string, timeout time.Duration) error {
	pi := &pkgingv1alpha1.PackageInstall{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	c.Progress.Infof("Uninstalling package '%s' from namespace '%s'", name, namespace)
	if err := c.C.Delete(ctx, pi); err != nil {
		return fmt.Errorf("failed to delete installed package '%s' in namespace '%s': %w", name, namespace, err)
	}
	if err := c.waitGone(ctx, pi, timeout); err != nil {
		return err
	}
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: createdName(name, namespace, "values")}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: createdName(name, namespace, "sa")}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: createdName(name, namespace, "cluster-rolebinding")}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: createdName(name, namespace, "cluster-role")}},
	} {
		if err := c.C.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("failed to delete %s: %w", o.GetName(), err)
		}
	}
	c.Progress.Infof("Uninstalled package '%s' from namespace '%s'", name, namespace)
	return nil
}
