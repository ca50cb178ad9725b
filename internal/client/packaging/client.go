package packaging

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/blang/semver/v4"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Client runs the package verbs against one cluster.
type Client struct {
	C client.Client
	// Progress prints the progress lines.
	Progress *progress.Printer
	// PollInterval is how often waits look; zero means a second.
	PollInterval time.Duration
	// GlobalNamespace holds packages visible from every namespace, as kapp-controller's
	// packaging global namespace; empty means TKG's tanzu-package-repo-global.
	GlobalNamespace string
}

// visible returns the namespaces whose packages a namespace sees: its own and the global one;
// nil (all) for "".
func (c *Client) visible(namespace string) []string {
	if namespace == "" {
		return []string{""}
	}
	global := c.GlobalNamespace
	if global == "" {
		global = tkg.PackageRepoGlobalNamespace
	}
	if namespace == global {
		return []string{namespace}
	}
	return []string{namespace, global}
}

func (c *Client) interval() time.Duration {
	if c.PollInterval > 0 {
		return c.PollInterval
	}
	return time.Second
}

// succeeded reads kapp-controller's conditions: done, and the error when failed: its friendly
// description ("Reconcile failed: …", which holds the error) and the useful error message it
// adds (the failed step's standard error, which may hold only a tool's progress lines), or the
// condition's message when it gives neither.
func succeeded(status kappctrlv1alpha1.GenericStatus, generation int64) (bool, error) {
	if status.ObservedGeneration != generation {
		return false, nil
	}
	for _, c := range status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case kappctrlv1alpha1.ReconcileSucceeded:
			return true, nil
		case kappctrlv1alpha1.ReconcileFailed:
			var parts []string
			for _, m := range []string{status.FriendlyDescription, status.UsefulErrorMessage} {
				if m = strings.TrimSpace(m); m != "" && !slices.ContainsFunc(parts, func(p string) bool { return strings.Contains(p, m) }) {
					parts = append(parts, m)
				}
			}
			if len(parts) == 0 {
				// The condition's message, which points at the status's fields otherwise.
				parts = append(parts, c.Message)
			}
			return false, errors.New(strings.Join(parts, "\n"))
		}
	}
	return false, nil
}

// retried says which failed reconciles a wait goes past, as kapp-controller retries them: a
// failure is reported once the object has failed this many times in a row (its status's
// consecutiveReconcileFailures), or, with retryUntilTimeout, only if it still fails at the
// timeout.
type retried struct {
	failures          int
	retryUntilTimeout bool
}

// waitFor polls get until the object reconciles, fails past what retry allows, or the timeout
// passes. get returns the object's status, generation and consecutive failures (0 where its kind
// does not count them).
func (c *Client) waitFor(ctx context.Context, what string, timeout time.Duration, retry retried, get func(context.Context) (kappctrlv1alpha1.GenericStatus, int64, int, error)) error {
	var last kappctrlv1alpha1.GenericStatus
	var failed error
	err := wait.PollUntilContextTimeout(ctx, c.interval(), timeout, true, func(ctx context.Context) (bool, error) {
		status, generation, failures, err := get(ctx)
		if err != nil {
			return false, err
		}
		last = status
		done, err := succeeded(status, generation)
		failed = err
		if err != nil && !retry.retryUntilTimeout && failures >= retry.failures {
			return false, err
		}
		return done, nil
	})
	if failed != nil {
		return fmt.Errorf("%s reconcile failed: %w", what, failed)
	}
	if err != nil {
		return fmt.Errorf("timed out after %s waiting for %s (last status %q): %w", timeout, what, last.FriendlyDescription, err)
	}
	return nil
}

// latestVersion returns the highest semantic version among the packages.
func latestVersion(pkgs []datapkgingv1alpha1.Package) string {
	var latest *semver.Version
	for _, p := range pkgs {
		v, err := semver.ParseTolerant(p.Spec.Version)
		if err != nil {
			continue
		}
		if latest == nil || latest.LT(v) {
			latest = &v
		}
	}
	if latest == nil {
		return ""
	}
	return latest.String()
}

// packagesOf lists the Packages of a refName visible from a namespace ("" for all).
func (c *Client) packagesOf(ctx context.Context, refName, namespace string) ([]datapkgingv1alpha1.Package, error) {
	var out []datapkgingv1alpha1.Package
	for _, ns := range c.visible(namespace) {
		list := &datapkgingv1alpha1.PackageList{}
		if err := c.C.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("failed to list packages: %w", err)
		}
		for _, p := range list.Items {
			if refName == "" || p.Spec.RefName == refName {
				out = append(out, p)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		vi, erri := semver.ParseTolerant(out[i].Spec.Version)
		vj, errj := semver.ParseTolerant(out[j].Spec.Version)
		if erri != nil || errj != nil {
			return out[i].Spec.Version < out[j].Spec.Version
		}
		return vi.LT(vj)
	})
	return out, nil
}

// ensureNamespace creates a namespace if asked to and it is missing, and returns it when it
// created it.
func (c *Client) ensureNamespace(ctx context.Context, name string) (client.Object, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	err := c.C.Create(ctx, ns)
	if apierrors.IsAlreadyExists(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("failed to create namespace %s: %w", name, err)
	}
	return ns, nil
}

// splitImage splits an image reference into repository and tag, for the repository columns.
func splitImage(ref string) (string, string) {
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		return ref[:i], ref[i+1:]
	}
	slash := strings.LastIndex(ref, "/")
	if i := strings.LastIndex(ref, ":"); i > slash {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}
