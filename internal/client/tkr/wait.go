package tkr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Progress is what WaitReady tells as it goes; either func may be nil.
type Progress struct {
	// Found is called once for each release first seen of a wanted version, Ready or not.
	Found func(name string)
	// Ready is called once for each release found Ready.
	Ready func(name string)
}

// WaitReady waits until each wanted version has a Ready release: a Kubernetes version (v1.35.4)
// is answered by any of its releases, a release's version by itself (tkg.ReleaseOf). On a timeout
// it names the versions left, in the order given, and what is wrong with each.
func WaitReady(ctx context.Context, c client.Client, wanted []string, timeout time.Duration, p Progress) error {
	found, told := map[string]bool{}, map[string]bool{}
	ready, why := map[string]bool{}, map[string]string{}
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		list := &runv1alpha3.TanzuKubernetesReleaseList{}
		if err := c.List(ctx, list); err != nil {
			if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
				return false, fmt.Errorf("failed to list TanzuKubernetesReleases: %w", err)
			}
			// An API server still settling (its CRDs just installed) is asked again.
			for _, v := range wanted {
				why[v] = "failed to list TanzuKubernetesReleases: " + err.Error()
			}
			return false, nil
		}
		for _, v := range wanted {
			if ready[v] {
				continue
			}
			why[v] = "no TanzuKubernetesRelease has this version"
			for _, t := range list.Items {
				if !tkg.ReleaseOf(t.Spec.Version, v) {
					continue
				}
				if !found[t.Name] {
					found[t.Name] = true
					call(p.Found, t.Name)
				}
				if t.Status.Conditions.IsTrue(runv1alpha3.ConditionReady) {
					ready[v] = true
					if !told[t.Name] {
						told[t.Name] = true
						call(p.Ready, t.Name)
					}
					break
				}
				why[v] = fmt.Sprintf("TanzuKubernetesRelease %s is not Ready", t.Name)
			}
		}
		return !slices.ContainsFunc(wanted, func(v string) bool { return !ready[v] }), nil
	})
	if err == nil || !wait.Interrupted(err) {
		// A forbidden list is returned as it is: waiting longer cannot mend it.
		return err
	}
	var left []string
	for _, v := range wanted {
		if !ready[v] && !slices.Contains(left, v+": "+why[v]) {
			left = append(left, v+": "+why[v])
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted while waiting for Kubernetes releases (%s): %w", strings.Join(left, "; "), err)
	}
	return fmt.Errorf("the Kubernetes releases are not ready after %s (%s; `slipway kubernetes-release get` shows their conditions): %w", timeout, strings.Join(left, "; "), err)
}

func call(f func(string), name string) {
	if f != nil {
		f(name)
	}
}
