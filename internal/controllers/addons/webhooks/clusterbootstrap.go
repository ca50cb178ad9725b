package webhooks

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Paths of the ClusterBootstrap and ClusterBootstrapTemplate webhooks.
const (
	ClusterBootstrapTemplateValidatePath = "/validate-run-tanzu-vmware-com-v1alpha3-clusterbootstraptemplate"
	ClusterBootstrapValidatePath         = "/validate-run-tanzu-vmware-com-v1alpha3-clusterbootstrap"
	ClusterBootstrapDefaultPath          = "/mutate-run-tanzu-vmware-com-v1alpha3-clusterbootstrap"
)

var specPath = field.NewPath("spec")

// validatePackages checks that kapp and cni are set (cni left out when the cluster's CNI is the
// user's) and that each package names a package and takes its values from at most one source.
func validatePackages(spec *runv1alpha3.ClusterBootstrapTemplateSpec, unmanagedCNI bool) field.ErrorList {
	if spec == nil {
		return field.ErrorList{field.Required(specPath, "the packages of the cluster: at least kapp and cni")}
	}
	var errs field.ErrorList
	core := addons.Core(spec)
	for _, name := range addons.CorePackages {
		p := *core[name]
		if name == "cni" && unmanagedCNI {
			if p != nil {
				errs = append(errs, field.Forbidden(specPath.Child(name), "the ClusterBootstrap is annotated "+runv1alpha3.AnnotationUnmanagedCNI+
					": the cluster's CNI is the user's, so cni must be left out (or the annotation removed)"))
			}
			continue
		}
		if p == nil {
			if name == "kapp" || name == "cni" {
				errs = append(errs, field.Required(specPath.Child(name), "every cluster needs a "+name+" package: set refName to one of the release's packages"))
			}
			continue
		}
		errs = append(errs, validatePackage(specPath.Child(name), p)...)
	}
	for i, p := range spec.AdditionalPackages {
		if p == nil {
			errs = append(errs, field.Required(specPath.Child("additionalPackages").Index(i), "an entry needs a refName"))
			continue
		}
		errs = append(errs, validatePackage(specPath.Child("additionalPackages").Index(i), p)...)
	}
	return errs
}

func validatePackage(path *field.Path, p *runv1alpha3.ClusterBootstrapPackage) field.ErrorList {
	var errs field.ErrorList
	if p.RefName == "" {
		errs = append(errs, field.Required(path.Child("refName"), "the name of the Package object to install"))
	}
	if kinds := valuesKinds(p.ValuesFrom); len(kinds) > 1 {
		errs = append(errs, field.Invalid(path.Child("valuesFrom"), strings.Join(kinds, ", "),
			"set only one of inline, secretRef and providerRef"))
	}
	return errs
}

// valuesKinds lists which sources a valuesFrom sets.
func valuesKinds(vf *runv1alpha3.ValuesFrom) []string {
	if vf == nil {
		return nil
	}
	var kinds []string
	if vf.Inline != nil {
		kinds = append(kinds, "inline")
	}
	if vf.SecretRef != "" {
		kinds = append(kinds, "secretRef")
	}
	if vf.ProviderRef != nil {
		kinds = append(kinds, "providerRef")
	}
	return kinds
}

// ClusterBootstrapTemplate validates ClusterBootstrapTemplates: they live in the system
// namespace, name kapp and cni packages that are Packages of the system namespace, take each
// package's values from one source, and never change.
type ClusterBootstrapTemplate struct {
	// Client reads Packages.
	Client client.Reader
	// SystemNamespace is where templates may be created.
	SystemNamespace string
}

var _ admission.Validator[*runv1alpha3.ClusterBootstrapTemplate] = &ClusterBootstrapTemplate{}

// SetupWebhookWithManager registers the webhook at ClusterBootstrapTemplateValidatePath.
func (v *ClusterBootstrapTemplate) SetupWebhookWithManager(mgr ctrl.Manager) error {
	if v.SystemNamespace == "" {
		v.SystemNamespace = tkg.SystemNamespace
	}
	if v.Client == nil {
		v.Client = mgr.GetAPIReader()
	}
	return ctrl.NewWebhookManagedBy(mgr, &runv1alpha3.ClusterBootstrapTemplate{}).
		WithValidator(v).WithValidatorCustomPath(ClusterBootstrapTemplateValidatePath).Complete()
}

// ValidateCreate checks the namespace, the packages and that each is a Package of the system
// namespace, as the ClusterBootstraps cloned from the template will need.
func (v *ClusterBootstrapTemplate) ValidateCreate(ctx context.Context, obj *runv1alpha3.ClusterBootstrapTemplate) (admission.Warnings, error) {
	var errs field.ErrorList
	if obj.Namespace != v.SystemNamespace {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "namespace"),
			fmt.Sprintf("ClusterBootstrapTemplates belong in the system namespace %s, not %s: create it there", v.SystemNamespace, obj.Namespace)))
	}
	errs = append(errs, validatePackages(obj.Spec, false)...)
	if obj.Spec != nil {
		for _, p := range packagePaths(obj.Spec) {
			if p.pkg.RefName == "" {
				continue
			}
			found, err := addons.LookupPackage(ctx, v.Client, v.SystemNamespace, v.SystemNamespace, p.pkg.RefName)
			if err != nil {
				return nil, err
			}
			if found == nil {
				errs = append(errs, field.Invalid(p.path.Child("refName"), p.pkg.RefName,
					fmt.Sprintf("no Package of this name in namespace %s: name a package of the release's package repository (`slipway package available list -n %s`)", v.SystemNamespace, v.SystemNamespace)))
			}
		}
	}
	return nil, invalidObject("ClusterBootstrapTemplate", obj.Name, errs)
}

// ValidateUpdate refuses every change of the spec.
func (v *ClusterBootstrapTemplate) ValidateUpdate(_ context.Context, oldObj, newObj *runv1alpha3.ClusterBootstrapTemplate) (admission.Warnings, error) {
	if reflect.DeepEqual(oldObj.Spec, newObj.Spec) {
		return nil, nil
	}
	return nil, invalidObject("ClusterBootstrapTemplate", newObj.Name, field.ErrorList{field.Forbidden(specPath,
		"ClusterBootstrapTemplate is immutable: it belongs to one release; a new release brings a new template")})
}

// ValidateDelete allows every deletion.
func (v *ClusterBootstrapTemplate) ValidateDelete(context.Context, *runv1alpha3.ClusterBootstrapTemplate) (admission.Warnings, error) {
	return nil, nil
}

func invalidObject(kind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(runv1alpha3.GroupVersion.WithKind(kind).GroupKind(), name, errs)
}

// ClusterBootstrap validates and defaults ClusterBootstraps.
//
// Validation: kapp and cni are set; every package is a Package of the cluster's namespace or
// the system namespace; each takes its values from one source. On update: no package is
// removed, none goes to an older version, a core package keeps its package (antrea cannot become
// calico), and a package keeps the kind of its values source.
//
// Defaulting: a ClusterBootstrap annotated tkg.tanzu.vmware.com/add-missing-fields-from-tkr
// gets refNames ending in '*' completed from that release's bootstrap packages and what it
// leaves out filled in from that release's ClusterBootstrapTemplate.
type ClusterBootstrap struct {
	Client          client.Reader
	SystemNamespace string
}

var (
	_ admission.Validator[*runv1alpha3.ClusterBootstrap] = &ClusterBootstrap{}
	_ admission.Defaulter[*runv1alpha3.ClusterBootstrap] = &ClusterBootstrap{}
)

// SetupWebhookWithManager registers the webhooks at ClusterBootstrapValidatePath and
// ClusterBootstrapDefaultPath.
func (w *ClusterBootstrap) SetupWebhookWithManager(mgr ctrl.Manager) error {
	if w.SystemNamespace == "" {
		w.SystemNamespace = tkg.SystemNamespace
	}
	if w.Client == nil {
		w.Client = mgr.GetAPIReader()
	}
	return ctrl.NewWebhookManagedBy(mgr, &runv1alpha3.ClusterBootstrap{}).
		WithValidator(w).WithValidatorCustomPath(ClusterBootstrapValidatePath).
		WithDefaulter(w).WithDefaulterCustomPath(ClusterBootstrapDefaultPath).Complete()
}

// Default completes an annotated ClusterBootstrap from its release.
func (w *ClusterBootstrap) Default(ctx context.Context, cb *runv1alpha3.ClusterBootstrap) error {
	tkrName, ok := cb.Annotations[runv1alpha3.AnnotationAddMissingFieldsFromTKR]
	if !ok {
		return nil
	}
	path := field.NewPath("metadata", "annotations").Key(runv1alpha3.AnnotationAddMissingFieldsFromTKR)
	tkr := &runv1alpha3.TanzuKubernetesRelease{}
	if err := w.Client.Get(ctx, client.ObjectKey{Name: tkrName}, tkr); err != nil {
		if apierrors.IsNotFound(err) {
			return invalidObject("ClusterBootstrap", cb.Name, field.ErrorList{field.Invalid(path, tkrName,
				"no TanzuKubernetesRelease of this name: name one that `slipway kubernetes-release get` lists")})
		}
		return err
	}
	if cb.Spec == nil {
		cb.Spec = &runv1alpha3.ClusterBootstrapTemplateSpec{}
	}
	if err := addons.CompleteRefNames(tkr, cb.Spec); err != nil {
		return invalidObject("ClusterBootstrap", cb.Name, field.ErrorList{field.Invalid(specPath, "refName", err.Error())})
	}
	cbt := &runv1alpha3.ClusterBootstrapTemplate{}
	if err := w.Client.Get(ctx, client.ObjectKey{Namespace: w.SystemNamespace, Name: tkrName}, cbt); err != nil {
		if apierrors.IsNotFound(err) {
			return invalidObject("ClusterBootstrap", cb.Name, field.ErrorList{field.Invalid(path, tkrName,
				fmt.Sprintf("release %s has no ClusterBootstrapTemplate in %s: its TKR package is incomplete", tkrName, w.SystemNamespace))})
		}
		return err
	}
	// The release's template serves every provider: of its CPI and CSI, a cluster is given its
	// own provider's only, by the rule the ClusterBootstrap controller follows. One whose Cluster
	// does not exist yet (a management cluster's, which the CLI writes on it before the move
	// brings its Cluster) gets none here: the controller adds its provider's when it adopts it
	// with its Cluster. Nothing the ClusterBootstrap names is taken away.
	template := cbt.Spec.DeepCopy()
	cluster := &clusterv1.Cluster{}
	switch err := w.Client.Get(ctx, client.ObjectKeyFromObject(cb), cluster); {
	case apierrors.IsNotFound(err):
		addons.DropForeign(template, "")
	case err != nil:
		return err
	default:
		if _, err := addons.DropForeignProviders(ctx, w.Client, cluster, template); err != nil {
			return err
		}
	}
	addons.DropUnmanagedCNI(cb, template)
	addons.AddMissingFields(template, cb.Spec)
	return nil
}

func (w *ClusterBootstrap) lookup(ctx context.Context, namespace, name string) (*datapkgingv1alpha1.Package, error) {
	return addons.LookupPackage(ctx, w.Client, namespace, w.SystemNamespace, name)
}

// ValidateCreate checks the packages and that each exists.
func (w *ClusterBootstrap) ValidateCreate(ctx context.Context, cb *runv1alpha3.ClusterBootstrap) (admission.Warnings, error) {
	errs, err := w.validate(ctx, cb)
	if err != nil {
		return nil, err
	}
	return nil, invalidObject("ClusterBootstrap", cb.Name, errs)
}

func (w *ClusterBootstrap) validate(ctx context.Context, cb *runv1alpha3.ClusterBootstrap) (field.ErrorList, error) {
	_, unmanaged := cb.Annotations[runv1alpha3.AnnotationUnmanagedCNI]
	errs := validatePackages(cb.Spec, unmanaged)
	if cb.Spec == nil {
		return errs, nil
	}
	for _, p := range packagePaths(cb.Spec) {
		if p.pkg.RefName == "" {
			continue
		}
		found, err := w.lookup(ctx, cb.Namespace, p.pkg.RefName)
		if err != nil {
			return nil, err
		}
		if found == nil {
			errs = append(errs, field.Invalid(p.path.Child("refName"), p.pkg.RefName,
				fmt.Sprintf("no Package of this name in namespace %s or %s: name one of the packages of the cluster's release", cb.Namespace, w.SystemNamespace)))
		}
	}
	return errs, nil
}

type packagePath struct {
	path *field.Path
	pkg  *runv1alpha3.ClusterBootstrapPackage
}

func packagePaths(spec *runv1alpha3.ClusterBootstrapTemplateSpec) []packagePath {
	var out []packagePath
	core := addons.Core(spec)
	for _, name := range addons.CorePackages {
		if p := *core[name]; p != nil {
			out = append(out, packagePath{specPath.Child(name), p})
		}
	}
	for i, p := range spec.AdditionalPackages {
		if p != nil {
			out = append(out, packagePath{specPath.Child("additionalPackages").Index(i), p})
		}
	}
	return out
}

// ValidateUpdate checks the new object as on create, then what may not change.
func (w *ClusterBootstrap) ValidateUpdate(ctx context.Context, oldCB, newCB *runv1alpha3.ClusterBootstrap) (admission.Warnings, error) {
	if reflect.DeepEqual(oldCB.Spec, newCB.Spec) || !newCB.DeletionTimestamp.IsZero() {
		// Metadata and finalizer changes, and a deleting object, are not checked.
		return nil, nil
	}
	errs, err := w.validate(ctx, newCB)
	if err != nil {
		return nil, err
	}
	if oldCB.Spec == nil || newCB.Spec == nil {
		return nil, invalidObject("ClusterBootstrap", newCB.Name, errs)
	}
	oldCore, newCore := addons.Core(oldCB.Spec), addons.Core(newCB.Spec)
	for _, name := range addons.CorePackages {
		o, n := *oldCore[name], *newCore[name]
		path := specPath.Child(name)
		switch {
		case o == nil:
		case n == nil:
			errs = append(errs, field.Forbidden(path, fmt.Sprintf("package %s cannot be removed from a cluster", o.RefName)))
		default:
			more, err := w.compare(ctx, newCB.Namespace, path, o, n, true)
			if err != nil {
				return nil, err
			}
			errs = append(errs, more...)
		}
	}
	for _, o := range oldCB.Spec.AdditionalPackages {
		if o == nil {
			continue
		}
		found := false
		for i, n := range newCB.Spec.AdditionalPackages {
			if n == nil || tkg.ShortName(n.RefName) != tkg.ShortName(o.RefName) {
				continue
			}
			found = true
			more, err := w.compare(ctx, newCB.Namespace, specPath.Child("additionalPackages").Index(i), o, n, false)
			if err != nil {
				return nil, err
			}
			errs = append(errs, more...)
		}
		if !found {
			errs = append(errs, field.Forbidden(specPath.Child("additionalPackages"), fmt.Sprintf("package %s cannot be removed from a cluster", o.RefName)))
		}
	}
	return nil, invalidObject("ClusterBootstrap", newCB.Name, errs)
}

// compare checks one package's change: same package (for core packages), no older version,
// same kind of values source.
func (w *ClusterBootstrap) compare(ctx context.Context, namespace string, path *field.Path, o, n *runv1alpha3.ClusterBootstrapPackage, core bool) (field.ErrorList, error) {
	var errs field.ErrorList
	oldPkg, err := w.lookup(ctx, namespace, o.RefName)
	if err != nil {
		return nil, err
	}
	newPkg, err := w.lookup(ctx, namespace, n.RefName)
	if err != nil {
		return nil, err
	}
	oldRef, newRef := tkg.ShortName(o.RefName), tkg.ShortName(n.RefName)
	if oldPkg != nil && newPkg != nil {
		oldRef, newRef = oldPkg.Spec.RefName, newPkg.Spec.RefName
	}
	if core && oldRef != newRef {
		errs = append(errs, field.Forbidden(path.Child("refName"), fmt.Sprintf(
			"the package cannot change from %s to %s on a running cluster", oldRef, newRef)))
	}
	if oldPkg != nil && newPkg != nil && oldRef == newRef {
		ov, err1 := version.ParseSemantic(oldPkg.Spec.Version)
		nv, err2 := version.ParseSemantic(newPkg.Spec.Version)
		if err1 == nil && err2 == nil && nv.LessThan(ov) {
			errs = append(errs, field.Forbidden(path.Child("refName"), fmt.Sprintf(
				"%s cannot be downgraded from %s to %s", newRef, oldPkg.Spec.Version, newPkg.Spec.Version)))
		}
	}
	ok, nk := strings.Join(valuesKinds(o.ValuesFrom), ","), strings.Join(valuesKinds(n.ValuesFrom), ",")
	switch {
	case ok == "":
	case ok != nk:
		errs = append(errs, field.Forbidden(path.Child("valuesFrom"), fmt.Sprintf(
			"the values of %s come from %s and cannot change to %q", n.RefName, ok, nk)))
	case o.ValuesFrom.ProviderRef != nil && (o.ValuesFrom.ProviderRef.Kind != n.ValuesFrom.ProviderRef.Kind ||
		!reflect.DeepEqual(o.ValuesFrom.ProviderRef.APIGroup, n.ValuesFrom.ProviderRef.APIGroup)):
		errs = append(errs, field.Forbidden(path.Child("valuesFrom", "providerRef"), fmt.Sprintf(
			"the values of %s come from a %s and cannot change to a %s", n.RefName, o.ValuesFrom.ProviderRef.Kind, n.ValuesFrom.ProviderRef.Kind)))
	}
	return errs, nil
}

// ValidateDelete allows every deletion.
func (w *ClusterBootstrap) ValidateDelete(context.Context, *runv1alpha3.ClusterBootstrap) (admission.Warnings, error) {
	return nil, nil
}
