package source

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/carvel/deploy"
	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Fetcher discovers the catalogue: it copies the newest compatibility metadata into the
// bom-metadata ConfigMap and creates the TKR Packages of every compatible release found in the
// TKR package repository, first every InitialInterval until one pass succeeds, then every
// Interval.
type Fetcher struct {
	Client        client.Client
	Compatibility *Compatibility
	// CompatibilityImage is the repository of the compatibility metadata image, tagged v1, v2, …
	CompatibilityImage string
	// TKRRepositoryImage is the repository of the TKR package repository bundles, one tag per
	// release version with "+" written "_".
	TKRRepositoryImage string
	InitialInterval    time.Duration
	Interval           time.Duration
	Auth               authn.Authenticator
	// Trust is how registries are trusted (tkr-controller-config); nil trusts the system's CAs.
	Trust *fetch.ConfigTrust
}

// SetupWithManager runs the fetcher with the manager.
func (f *Fetcher) SetupWithManager(mgr ctrl.Manager) error {
	if f.CompatibilityImage == "" || f.TKRRepositoryImage == "" {
		return errors.New("the TKR source needs both the compatibility image (--bom-metadata-image-path) and the TKR repository image (--tkr-repo-image-path)")
	}
	if f.Auth == nil {
		f.Auth = authn.Anonymous
	}
	return mgr.Add(f)
}

// Start fetches until the context ends.
func (f *Fetcher) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("tkr-fetcher")
	ctx = ctrl.LoggerInto(ctx, log)
	interval := f.InitialInterval
	for {
		if err := f.FetchAll(ctx); err != nil {
			log.Error(err, "Failed to fetch the TKR catalogue; retrying", "after", interval)
		} else {
			interval = f.Interval
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// FetchAll runs one discovery pass.
func (f *Fetcher) FetchAll(ctx context.Context) error {
	transport, err := f.Trust.Transport(ctx)
	if err != nil {
		return err
	}
	reg := fetch.Registry{Auth: f.Auth, Transport: transport}
	if err := f.fetchCompatibility(ctx, reg); err != nil {
		return err
	}
	return f.fetchTKRPackages(ctx, reg)
}

func (f *Fetcher) fetchCompatibility(ctx context.Context, reg fetch.Registry) error {
	content, err := ReadCompatibility(ctx, f.CompatibilityImage, reg)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.Compatibility.Namespace, Name: CompatibilityConfigMap}}
	_, err = controllerutil.CreateOrPatch(ctx, f.Client, cm, func() error {
		cm.BinaryData = map[string][]byte{CompatibilityKey: content}
		return nil
	})
	return err
}

// ReadCompatibility returns the metadata of the newest readable tag (v<number>) of the
// compatibility image; an unreadable newest tag falls back to the one before, as TKG does.
func ReadCompatibility(ctx context.Context, image string, reg fetch.Registry) ([]byte, error) {
	tags, err := fetch.ListTags(ctx, image, reg)
	if err != nil {
		return nil, err
	}
	var numbers []int
	for _, t := range tags {
		if n, err := strconv.Atoi(strings.TrimPrefix(t, "v")); err == nil {
			numbers = append(numbers, n)
		}
	}
	if len(numbers) == 0 {
		return nil, fmt.Errorf("%s has no tag of the form v<number>", image)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(numbers)))
	var errs []error
	for _, n := range numbers {
		content, err := compatibilityFile(ctx, fmt.Sprintf("%s:v%d", image, n), reg)
		if err == nil {
			return content, nil
		}
		errs = append(errs, err)
	}
	return nil, kerrors.NewAggregate(errs)
}

// compatibilityFile returns the one metadata file of the image, checked to parse.
func compatibilityFile(ctx context.Context, ref string, reg fetch.Registry) ([]byte, error) {
	files, err := fetch.ImageFiles(ctx, ref, reg)
	if err != nil {
		return nil, err
	}
	var content []byte
	for path, data := range files {
		if strings.HasPrefix(path, ".") {
			continue
		}
		if content != nil {
			return nil, fmt.Errorf("%s holds more than one file: the compatibility image holds only its metadata", ref)
		}
		content = data
	}
	if content == nil {
		return nil, fmt.Errorf("%s holds no compatibility metadata", ref)
	}
	if err := yaml.UnmarshalStrict(content, &CompatibilityMetadata{}); err != nil {
		return nil, fmt.Errorf("%s: invalid compatibility metadata: %w", ref, err)
	}
	return content, nil
}

func (f *Fetcher) fetchTKRPackages(ctx context.Context, reg fetch.Registry) error {
	compatible, _, err := f.Compatibility.CompatibleVersions(ctx)
	if err != nil {
		return err
	}
	tags, err := fetch.ListTags(ctx, f.TKRRepositoryImage, reg)
	if err != nil {
		return err
	}
	wanted := sets.New[string]()
	for v := range compatible {
		wanted.Insert(strings.ReplaceAll(v, "+", "_"))
	}
	var errs []error
	for _, tag := range sets.List(wanted.Intersection(sets.New(tags...))) {
		if err := f.createTKRPackages(ctx, reg, f.TKRRepositoryImage+":"+tag); err != nil {
			errs = append(errs, err)
		}
	}
	return kerrors.NewAggregate(errs)
}

// createTKRPackages creates the Packages labelled run.tanzu.vmware.com/tkr-package of one TKR
// package repository bundle, and updates those whose content changed.
func (f *Fetcher) createTKRPackages(ctx context.Context, reg fetch.Registry, ref string) error {
	files, err := fetch.ImageFiles(ctx, ref, reg)
	if err != nil {
		return err
	}
	// The TKR bundles are where the repository's lock has them: beside it when it was copied.
	bundles, err := fetch.LockedImages(ctx, ref, files, reg)
	if err != nil {
		return err
	}
	var errs []error
	for _, path := range sortedPaths(files) {
		if !strings.HasPrefix(path, "packages/") || strings.HasSuffix(path, "/metadata.yml") {
			continue
		}
		objs, err := deploy.Parse(files[path])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", ref, path, err))
			continue
		}
		for _, u := range objs {
			if _, ok := u.GetLabels()[tkg.LabelTKRPackage]; !ok || u.GetKind() != "Package" {
				continue
			}
			pkg := &datapkgingv1alpha1.Package{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, pkg); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", ref, path, err))
				continue
			}
			if spec := pkg.Spec.Template.Spec; spec != nil {
				for _, step := range spec.Fetch {
					if step.ImgpkgBundle != nil && bundles[step.ImgpkgBundle.Image] != "" {
						step.ImgpkgBundle.Image = bundles[step.ImgpkgBundle.Image]
					}
				}
			}
			if err := f.savePackage(ctx, pkg); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return kerrors.NewAggregate(errs)
}

func (f *Fetcher) savePackage(ctx context.Context, want *datapkgingv1alpha1.Package) error {
	pkg := &datapkgingv1alpha1.Package{ObjectMeta: metav1.ObjectMeta{Namespace: f.Compatibility.Namespace, Name: want.Name}}
	res, err := controllerutil.CreateOrPatch(ctx, f.Client, pkg, func() error {
		if pkg.Labels == nil {
			pkg.Labels = map[string]string{}
		}
		for k, v := range want.Labels {
			pkg.Labels[k] = v
		}
		pkg.Spec = want.Spec
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to save TKR Package %s: %w", want.Name, err)
	}
	if res != controllerutil.OperationResultNone {
		ctrl.LoggerFrom(ctx).Info("TKR Package saved", "name", want.Name, "result", res)
	}
	return nil
}

func sortedPaths(files map[string][]byte) []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
