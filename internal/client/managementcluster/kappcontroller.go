package managementcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/carvel/template"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// appConcurrency is how many Apps the kapp-controller of a bootstrap or management cluster
// reconciles at once: its binary's default, where TKG's package gives 4. An App holds its worker
// while kapp waits for what it deployed, tkg-pkg's until its nine packages are reconciled, so
// with 4 those packages queued behind each other: their Apps waited 7 to 17 s before their
// fetch began (measured 2026-12-05 on a management cluster of real nodes).
const appConcurrency = 10

// InstallKappController renders the newest kapp-controller package of the repository with its
// default values, but for the concurrency (appConcurrency), and deploys it, waiting for its
// Deployment and its aggregated API, as the tanzu CLI installs kapp-controller from its package
// before anything else. globalNamespace is its
// packaging global namespace: the Packages there serve every namespace.
func InstallKappController(ctx context.Context, c client.Client, repo *Repository, globalNamespace string, timeout time.Duration, out *progress.Printer) error {
	pkg, err := newestPackage(repo.files, repo.Ref, KappControllerRefName)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "slipway-kapp-controller-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	spec := pkg.Spec.Template.Spec
	if spec == nil {
		return fmt.Errorf("package %s has no spec.template.spec", pkg.Name)
	}
	fetches := slices.Clone(spec.Fetch)
	for i, step := range fetches {
		if step.ImgpkgBundle != nil {
			b := *step.ImgpkgBundle
			b.Image = repo.bundle(b.Image)
			fetches[i].ImgpkgBundle = &b
		}
	}
	if err := fetch.Fetch(ctx, nil, "", fetches, dir, repo.registry.Transport); err != nil {
		return fmt.Errorf("package %s: %w", pkg.Name, err)
	}
	// It trusts the registry as the configuration says (kapp-controller-config).
	values, err := yaml.Marshal(map[string]any{"kappController": map[string]any{
		"globalNamespace": globalNamespace,
		"deployment":      map[string]any{"concurrency": appConcurrency},
		"config":          map[string]string{"caCerts": repo.trust.CACerts, "dangerousSkipTLSVerify": strings.Join(repo.trust.SkipVerify, ",")},
	}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, valuesFile), values, 0o600); err != nil {
		return err
	}
	steps := slices.Clone(spec.Template)
	if len(steps) == 0 || steps[0].Ytt == nil {
		return fmt.Errorf("package %s does not template with ytt first: its values cannot be given", pkg.Name)
	}
	first := *steps[0].Ytt
	first.ValuesFrom = append(slices.Clone(first.ValuesFrom), kappctrlv1alpha1.AppTemplateValuesSource{Path: valuesFile})
	steps[0].Ytt = &first
	manifests, err := template.Template(ctx, nil, "", steps, dir)
	if err != nil {
		return fmt.Errorf("package %s: %w", pkg.Name, err)
	}
	objs, err := deploy.Parse(manifests)
	if err != nil {
		return fmt.Errorf("package %s: %w", pkg.Name, err)
	}
	// The kapp record lives in the namespace, so it comes first.
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tkg.SystemNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", tkg.SystemNamespace, err)
	}
	out.Infof("waiting for resource %s of type *v1.Deployment to be up and running", kappController)
	start := time.Now()
	if _, err := deploy.Apply(ctx, deploy.Target{Client: c, Namespace: tkg.SystemNamespace}, deploy.AppName(kappController), objs, timeout); err != nil {
		return fmt.Errorf("failed to install kapp-controller %s: %w", pkg.Spec.Version, err)
	}
	out.Infof("kapp-controller %s is running after %s", pkg.Spec.Version, time.Since(start).Round(time.Millisecond))
	return nil
}
