package packaging

import (
	"context"
	"fmt"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// RepositoryOptions are what `package repository add` takes.
type RepositoryOptions struct {
	Name, Namespace, URL string
	CreateNamespace      bool
	Wait                 bool
	WaitTimeout          time.Duration
	// Update refuses a repository that does not exist (`repository update`).
	Update bool
}

// RepositoryRow is one line of `package repository list`.
type RepositoryRow struct {
	Name, Repository, Tag, Status, Details, Namespace string
}

// repositoryFailures is how many failed reconciles in a row a repository's wait takes before it
// reports the failure: kapp-controller retries a failed one 2 s and then 4 s later, and
// v0.50.0 can fail a fetch or templating once without cause (its child reaper can take the exit
// status its command waits for, "Templating dir: waitid: no child processes"; the bootstrap
// cluster's tanzu-management repository failed once in CI on 2026-12-06 with only kbld's
// progress lines to say why). A repository that cannot be fetched or templated is reported about
// 6 s after its first failure.
const repositoryFailures = 3

// RepositoryAdd adds (or updates) a package repository of an imgpkg bundle and waits for its
// packages to be available.
func (c *Client) RepositoryAdd(ctx context.Context, o RepositoryOptions) error {
	if o.URL == "" {
		return field.Required(field.NewPath("url"), "the imgpkg bundle of the repository, such as projects.registry.vmware.com/tkg/packages/standard/repo:v2.2.0")
	}
	if o.CreateNamespace {
		if _, err := c.ensureNamespace(ctx, o.Namespace); err != nil {
			return err
		}
	}
	repo := &pkgingv1alpha1.PackageRepository{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name}}
	err := c.C.Get(ctx, client.ObjectKeyFromObject(repo), repo)
	fetch := &pkgingv1alpha1.PackageRepositoryFetch{ImgpkgBundle: &kappctrlv1alpha1.AppFetchImgpkgBundle{Image: o.URL}}
	switch {
	case apierrors.IsNotFound(err) && o.Update:
		return fmt.Errorf("package repository '%s' does not exist in namespace '%s': add it with `slipway package repository add %s --url %s -n %s`",
			o.Name, o.Namespace, o.Name, o.URL, o.Namespace)
	case apierrors.IsNotFound(err):
		c.Progress.Infof("Adding package repository '%s'", o.Name)
		repo.Spec.Fetch = fetch
		err = c.C.Create(ctx, repo)
	case err == nil:
		c.Progress.Infof("Updating package repository '%s'", o.Name)
		repo.Spec.Fetch = fetch
		err = c.C.Update(ctx, repo)
	}
	if err != nil {
		return fmt.Errorf("failed to add package repository %s: %w", o.Name, err)
	}
	if !o.Wait {
		return nil
	}
	if o.Update {
		c.Progress.Infof("Waiting for package repository to be updated")
	} else {
		c.Progress.Infof("Waiting for package repository to be added")
	}
	if err := c.waitFor(ctx, "package repository "+o.Name, o.WaitTimeout, retried{failures: repositoryFailures}, func(ctx context.Context) (kappctrlv1alpha1.GenericStatus, int64, int, error) {
		r := &pkgingv1alpha1.PackageRepository{}
		err := c.C.Get(ctx, client.ObjectKeyFromObject(repo), r)
		return r.Status.GenericStatus, r.Generation, r.Status.ConsecutiveReconcileFailures, err
	}); err != nil {
		return err
	}
	if o.Update {
		c.Progress.Infof("Updated package repository '%s' in namespace '%s'", o.Name, o.Namespace)
		return nil
	}
	c.Progress.Infof("Added package repository '%s' in namespace '%s'", o.Name, o.Namespace)
	return nil
}

// RepositoryList lists repositories of a namespace ("" for all).
func (c *Client) RepositoryList(ctx context.Context, namespace string) ([]RepositoryRow, error) {
	list := &pkgingv1alpha1.PackageRepositoryList{}
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if err := c.C.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("failed to list package repositories: %w", err)
	}
	rows := make([]RepositoryRow, 0, len(list.Items))
	for _, r := range list.Items {
		rows = append(rows, repositoryRow(&r))
	}
	return rows, nil
}

// RepositoryGet returns one repository.
func (c *Client) RepositoryGet(ctx context.Context, name, namespace string) (RepositoryRow, error) {
	r := &pkgingv1alpha1.PackageRepository{}
	if err := c.C.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, r); err != nil {
		return RepositoryRow{}, fmt.Errorf("failed to find package repository '%s' in namespace '%s': %w", name, namespace, err)
	}
	return repositoryRow(r), nil
}

func repositoryRow(r *pkgingv1alpha1.PackageRepository) RepositoryRow {
	var image string
	if f := r.Spec.Fetch; f != nil {
		switch {
		case f.ImgpkgBundle != nil:
			image = f.ImgpkgBundle.Image
		case f.Image != nil:
			image = f.Image.URL
		}
	}
	repo, tag := splitImage(image)
	return RepositoryRow{Name: r.Name, Repository: repo, Tag: tag, Status: r.Status.FriendlyDescription, Details: r.Status.UsefulErrorMessage, Namespace: r.Namespace}
}

// RepositoryDelete deletes a repository and waits until its packages are gone.
func (c *Client) RepositoryDelete(ctx context.Context, name, namespace string, timeout time.Duration) error {
	r := &pkgingv1alpha1.PackageRepository{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	c.Progress.Infof("Deleting package repository '%s' from namespace '%s'", name, namespace)
	if err := c.C.Delete(ctx, r); err != nil {
		return fmt.Errorf("failed to delete package repository '%s' in namespace '%s': %w", name, namespace, err)
	}
	if err := c.waitGone(ctx, r, timeout); err != nil {
		return err
	}
	c.Progress.Infof("Deleted package repository '%s' from namespace '%s'", name, namespace)
	return nil
}

func (c *Client) waitGone(ctx context.Context, obj client.Object, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		err := c.C.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s to be deleted", timeout, obj.GetName())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(c.interval()):
		}
	}
}
