package clusterbootstrap

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/util"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// getOrCreate returns the Cluster's ClusterBootstrap, cloning it from the release's template
// when there is none. It returns nil while the Cluster waits for a user's ClusterBootstrap.
func (r *Reconciler) getOrCreate(ctx context.Context, s *scope) (*runv1alpha3.ClusterBootstrap, error) {
	cb := &runv1alpha3.ClusterBootstrap{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(s.cluster), cb)
	switch {
	case err == nil:
		return cb, nil
	case !apierrors.IsNotFound(err):
		return nil, err
	}
	if _, custom := s.cluster.Annotations[runv1alpha3.AnnotationCustomClusterBootstrap]; custom {
		ctrl.LoggerFrom(ctx).Info("Waiting for the user's ClusterBootstrap", "annotation", runv1alpha3.AnnotationCustomClusterBootstrap)
		r.Recorder.Eventf(s.cluster, nil, corev1.EventTypeNormal, ReasonWaitingForUsers, "Wait",
			"Waiting for a ClusterBootstrap %s: the Cluster is annotated %s, so none is cloned from release %s",
			klog.KObj(s.cluster), runv1alpha3.AnnotationCustomClusterBootstrap, s.tkrName)
		return nil, nil
	}
	return r.createFromTemplate(ctx, s.cluster, s.tkrName)
}

// reconcileRelease makes the ClusterBootstrap's spec follow the Cluster's release and returns
// the release it follows: one the user (or the CLI) wrote is completed and adopted; one this
// controller made or adopted moves to a new release. A change is written at once. The release
// followed is recorded in status.resolvedTKR, but that is not the only witness: `clusterctl
// move` does not carry status, so a moved ClusterBootstrap, still controlled by its Cluster, is
// compared with the release's template, and left as it is, user edits kept, when it already
// follows it.
//
// The cache may show a ClusterBootstrap just adopted or cloned with its controller but not yet
// its status; before it is moved, it is read again from the API server, or the packages of the
// release's template would be added to the one a user wrote.
func (r *Reconciler) reconcileRelease(ctx context.Context, s *scope) (string, error) {
	if s.cb.Status.ResolvedTKR != s.tkrName && controlledBy(s.cb, s.cluster) {
		if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(s.cb), s.cb); err != nil {
			return "", err
		}
	}
	switch {
	case s.cb.Status.ResolvedTKR == s.tkrName:
		// The release is unchanged: the ClusterBootstrap, user edits included, is the truth.
		return s.tkrName, nil
	case !controlledBy(s.cb, s.cluster):
		return r.adoptUsers(ctx, s)
	}
	return s.tkrName, r.moveToRelease(ctx, s)
}

// controlledBy says whether the Cluster is the ClusterBootstrap's controller, which only this
// controller makes it. The UID is not compared: `clusterctl move` gives the Cluster a new one.
func controlledBy(cb *runv1alpha3.ClusterBootstrap, cluster *clusterv1.Cluster) bool {
	ref := metav1.GetControllerOf(cb)
	return ref != nil && ref.Kind == "Cluster" && ref.Name == cluster.Name && strings.HasPrefix(ref.APIVersion, clusterv1.GroupVersion.Group+"/")
}

func (r *Reconciler) template(ctx context.Context, name string) (*runv1alpha3.ClusterBootstrapTemplate, error) {
	cbt := &runv1alpha3.ClusterBootstrapTemplate{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.SystemNamespace, Name: name}, cbt); err != nil {
		return nil, fmt.Errorf("ClusterBootstrapTemplate %s: %w", klog.KRef(r.SystemNamespace, name), err)
	}
	if cbt.Spec == nil {
		return nil, reconcile.TerminalError(fmt.Errorf("ClusterBootstrapTemplate %s has no spec: the release's TKR package writes it; reinstall the release", klog.KRef(r.SystemNamespace, name)))
	}
	return cbt, nil
}

func clusterController(cluster *clusterv1.Cluster) metav1.OwnerReference {
	ref := clusterOwner(cluster)
	ref.Controller, ref.BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	return ref
}

// createFromTemplate clones the release's ClusterBootstrapTemplate, and what its packages'
// values come from, into the cluster's namespace.
func (r *Reconciler) createFromTemplate(ctx context.Context, cluster *clusterv1.Cluster, tkrName string) (*runv1alpha3.ClusterBootstrap, error) {
	cbt, err := r.template(ctx, tkrName)
	if err != nil {
		return nil, err
	}
	cb := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: cluster.Namespace, Name: cluster.Name,
		OwnerReferences: []metav1.OwnerReference{clusterController(cluster)}}, Spec: cbt.Spec.DeepCopy()}
	if err := r.dropForeignProviders(ctx, cluster, cb.Spec); err != nil {
		return nil, err
	}
	var cloned []client.Object
	for _, pkg := range addons.Packages(cb.Spec) {
		objs, err := r.cloneReferences(ctx, cluster, pkg, cbt.Namespace)
		if err != nil {
			return nil, err
		}
		cloned = append(cloned, objs...)
	}
	if err := r.Client.Create(ctx, cb); err != nil {
		return nil, fmt.Errorf("failed to create ClusterBootstrap %s: %w", klog.KObj(cb), err)
	}
	if err := r.ownByClusterBootstrap(ctx, cb, cloned); err != nil {
		return nil, err
	}
	r.Recorder.Eventf(cb, cluster, corev1.EventTypeNormal, ReasonCloned, "Clone", "Cloned from ClusterBootstrapTemplate %s/%s", cbt.Namespace, cbt.Name)
	// Its status is set by reconcileRelease: it is the Cluster's and follows the template.
	return cb, nil
}

// dropForeignProviders leaves out of spec the CPI and CSI of another infrastructure than the
// cluster's, and logs what it left out.
func (r *Reconciler) dropForeignProviders(ctx context.Context, cluster *clusterv1.Cluster, spec *runv1alpha3.ClusterBootstrapTemplateSpec) error {
	dropped, err := addons.DropForeignProviders(ctx, r.Client, cluster, spec)
	if len(dropped) > 0 {
		ctrl.LoggerFrom(ctx).Info("Left out the packages of another infrastructure", "packages", dropped)
	}
	return err
}

// adoptUsers takes over a ClusterBootstrap the user made. With the add-missing-fields
// annotation, what it leaves out comes from that release's template. Inline values become
// Secrets; a Secret or provider the user made in the cluster's namespace is used and becomes the
// Cluster's; one that exists only in the system namespace (named by the template) is cloned.
func (r *Reconciler) adoptUsers(ctx context.Context, s *scope) (string, error) {
	cluster, cb, tkrName := s.cluster, s.cb, s.tkrName
	before := cb.DeepCopy()
	from := cb.Annotations[runv1alpha3.AnnotationAddMissingFieldsFromTKR]
	if from != "" {
		cbt, err := r.template(ctx, from)
		if err != nil {
			return "", err
		}
		tkrName = from
		template := cbt.Spec.DeepCopy()
		if err := r.dropForeignProviders(ctx, cluster, template); err != nil {
			return "", err
		}
		addons.DropUnmanagedCNI(cb, template)
		addons.AddMissingFields(template, cb.Spec)
	}
	var cloned []client.Object
	for _, p := range addons.Packages(cb.Spec) {
		vf := p.ValuesFrom
		if vf == nil || s.foreign[p.RefName] {
			continue
		}
		// An object of the cluster's namespace is the user's, unless it is the release's
		// template (a management cluster's namespace is the system namespace).
		var own client.Object
		switch {
		case vf.Inline != nil:
		case vf.SecretRef != "":
			secret := &corev1.Secret{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cb.Namespace, Name: vf.SecretRef}, secret); err == nil && !isTemplate(secret) {
				own = secret
			}
		case vf.ProviderRef != nil:
			provider, err := r.providerObject(vf.ProviderRef)
			if err != nil {
				return "", err
			}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: cb.Namespace, Name: vf.ProviderRef.Name}, provider); err == nil && !isTemplate(provider) {
				own = provider
			}
		}
		if own == nil && vf.Inline == nil && from == "" {
			return "", &errWaiting{fmt.Sprintf("the values of package %s, named by ClusterBootstrap %s/%s, to be made in namespace %s",
				p.RefName, cb.Namespace, cb.Name, cb.Namespace)}
		}
		if own == nil {
			objs, err := r.cloneReferences(ctx, cluster, p, r.SystemNamespace)
			if err != nil {
				return "", err
			}
			cloned = append(cloned, objs...)
			continue
		}
		if err := r.adopt(ctx, cluster, p, own); err != nil {
			return "", err
		}
	}
	if err := r.ownByClusterBootstrap(ctx, cb, cloned); err != nil {
		return "", err
	}
	cb.OwnerReferences = util.EnsureOwnerRef(cb.OwnerReferences, clusterController(cluster))
	if err := r.Client.Patch(ctx, cb, client.MergeFrom(before)); err != nil {
		return "", fmt.Errorf("failed to adopt ClusterBootstrap %s: %w", klog.KObj(cb), err)
	}
	r.Recorder.Eventf(cb, cluster, corev1.EventTypeNormal, ReasonAdopted, "Adopt", "Adopted for cluster %s, following release %s", cluster.Name, tkrName)
	return tkrName, nil
}

// isTemplate says whether an object is a release's template of package values, which is cloned
// for a cluster, never adopted.
func isTemplate(o client.Object) bool {
	_, ok := o.GetAnnotations()[tkg.AnnotationTemplateConfig]
	return ok
}

// moveToRelease moves a ClusterBootstrap to its Cluster's release: every package takes the
// release's version of the same package (the template's, or for a package the template does
// not name, such as calico where the release defaults to antrea, the release's bootstrap
// package of that name) and keeps its valuesFrom; packages new in the template are added with
// their values cloned; packages the release no longer has stay. A ClusterBootstrap that already
// follows the release is left as it is.
func (r *Reconciler) moveToRelease(ctx context.Context, s *scope) error {
	cbt, err := r.template(ctx, s.tkrName)
	if err != nil {
		return err
	}
	tkr := &runv1alpha3.TanzuKubernetesRelease{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: s.tkrName}, tkr); err != nil {
		return err
	}
	// A package the cluster has follows the new release; of those it lacks, another
	// infrastructure's CPI and CSI are not added.
	addable := cbt.Spec.DeepCopy()
	if err := r.dropForeignProviders(ctx, s.cluster, addable); err != nil {
		return err
	}
	addons.DropUnmanagedCNI(s.cb, addable)
	before := s.cb.DeepCopy()
	added := followRelease(s.cb.Spec, cbt.Spec, addable, tkr)
	if apiequality.Semantic.DeepEqual(before.Spec, s.cb.Spec) {
		return nil
	}
	from := s.cb.Status.ResolvedTKR
	ctrl.LoggerFrom(ctx).Info("Upgrading ClusterBootstrap", "from", from, "to", s.tkrName)
	var cloned []client.Object
	for _, p := range added {
		objs, err := r.cloneReferences(ctx, s.cluster, p, cbt.Namespace)
		if err != nil {
			return err
		}
		cloned = append(cloned, objs...)
	}
	if err := r.ownByClusterBootstrap(ctx, s.cb, cloned); err != nil {
		return err
	}
	if err := r.Client.Patch(ctx, s.cb, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("failed to move ClusterBootstrap %s to release %s: %w", klog.KObj(s.cb), s.tkrName, err)
	}
	if from == "" {
		from = "an unrecorded release"
	}
	r.Recorder.Eventf(s.cb, s.cluster, corev1.EventTypeNormal, ReasonUpgraded, "Upgrade", "Packages moved from %s to release %s", from, s.tkrName)
	return nil
}

// followRelease points spec's packages at the release's versions of them and adds the
// template's packages spec lacks, of those addable has. It returns the packages it added.
func followRelease(spec, template, addable *runv1alpha3.ClusterBootstrapTemplateSpec, tkr *runv1alpha3.TanzuKubernetesRelease) []*runv1alpha3.ClusterBootstrapPackage {
	// released names the release's bootstrap package of each short name.
	released := map[string]string{}
	for _, bp := range tkr.Spec.BootstrapPackages {
		released[tkg.ShortName(bp.Name)] = bp.Name
	}
	follow := func(p *runv1alpha3.ClusterBootstrapPackage) {
		if name, ok := released[tkg.ShortName(p.RefName)]; ok {
			p.RefName = name
		}
	}
	var added []*runv1alpha3.ClusterBootstrapPackage
	core, templateCore, addableCore := addons.Core(spec), addons.Core(template), addons.Core(addable)
	for _, name := range addons.CorePackages {
		p, t := core[name], *templateCore[name]
		switch {
		case *p != nil && t != nil && tkg.ShortName((*p).RefName) == tkg.ShortName(t.RefName):
			(*p).RefName = t.RefName
		case *p != nil:
			follow(*p)
		case t != nil && *addableCore[name] != nil:
			*p = t.DeepCopy()
			added = append(added, *p)
		}
	}
	for _, p := range spec.AdditionalPackages {
		follow(p)
	}
	for _, t := range addable.AdditionalPackages {
		found := false
		for _, p := range spec.AdditionalPackages {
			if tkg.ShortName(p.RefName) == tkg.ShortName(t.RefName) {
				p.RefName, found = t.RefName, true
			}
		}
		if !found {
			p := t.DeepCopy()
			spec.AdditionalPackages = append(spec.AdditionalPackages, p)
			added = append(added, p)
		}
	}
	return added
}
