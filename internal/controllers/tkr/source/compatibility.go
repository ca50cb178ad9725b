package source

import (
	"context"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/yaml"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Names TKG gives.
const (
	// CompatibilityConfigMap holds the compatibility metadata under binaryData.compatibility.
	CompatibilityConfigMap = "bom-metadata"
	// CompatibilityKey is the key of the metadata in CompatibilityConfigMap.
	CompatibilityKey = "compatibility"
	// LabelAdditionalTKRs marks ConfigMaps whose data.tkrVersions (a YAML list) adds releases to
	// the compatible set.
	LabelAdditionalTKRs = "run.tanzu.vmware.com/additional-compatible-tkrs"
	// AdditionalTKRsKey is the key of the list in such a ConfigMap.
	AdditionalTKRsKey = "tkrVersions"

	// ReasonNotInCompatibilityMetadata says why a release is not Compatible.
	ReasonNotInCompatibilityMetadata = "NotInCompatibilityMetadata"
)

// CompatibilityMetadata is the content of the compatibility image: for each TKG version of a
// management cluster, the releases it supports.
type CompatibilityMetadata struct {
	Version                   string                     `json:"version,omitempty"`
	ManagementClusterVersions []ManagementClusterVersion `json:"managementClusterVersions"`
}

// ManagementClusterVersion lists the releases one TKG version supports.
type ManagementClusterVersion struct {
	TKGVersion                  string   `json:"version"`
	SupportedKubernetesVersions []string `json:"supportedKubernetesVersions"`
}

// SupportedBy returns the releases the metadata lists for a TKG version, and whether it has an
// entry for it.
func (m *CompatibilityMetadata) SupportedBy(tkgVersion string) ([]string, bool) {
	var out []string
	found := false
	for _, mv := range m.ManagementClusterVersions {
		if mv.TKGVersion == tkgVersion {
			out = append(out, mv.SupportedKubernetesVersions...)
			found = true
		}
	}
	return out, found
}

// Compatibility computes the compatible release versions.
type Compatibility struct {
	Client    client.Reader
	Namespace string
}

// CompatibleVersions returns the release versions compatible with the management cluster: those
// the metadata lists for its TKGVERSION, and those of ConfigMaps labelled
// run.tanzu.vmware.com/additional-compatible-tkrs. It also says why the set is what it is, for
// the conditions of releases outside it.
func (c *Compatibility) CompatibleVersions(ctx context.Context) (sets.Set[string], string, error) {
	out := sets.New[string]()
	why := ""
	tkgVersion, err := c.managementVersion(ctx)
	if err != nil {
		return nil, "", err
	}
	metadata, err := c.metadata(ctx)
	if err != nil {
		return nil, "", err
	}
	switch {
	case tkgVersion == "":
		why = fmt.Sprintf("no Cluster labelled %s carries the %s annotation", tkg.LabelManagementCluster, tkg.AnnotationTKGVersion)
	case metadata == nil:
		why = fmt.Sprintf("ConfigMap %s/%s holds no compatibility metadata yet", c.Namespace, CompatibilityConfigMap)
	default:
		supported, found := metadata.SupportedBy(tkgVersion)
		out.Insert(supported...)
		if found {
			why = fmt.Sprintf("the compatibility metadata does not list it for TKG %s", tkgVersion)
		} else {
			why = fmt.Sprintf("the compatibility metadata has no entry for TKG %s", tkgVersion)
		}
	}
	extra, err := c.additional(ctx)
	if err != nil {
		return nil, "", err
	}
	return out.Union(extra), why, nil
}

func (c *Compatibility) managementVersion(ctx context.Context) (string, error) {
	clusters := &clusterv1.ClusterList{}
	if err := c.Client.List(ctx, clusters, client.HasLabels{tkg.LabelManagementCluster}); err != nil {
		return "", fmt.Errorf("failed to list management Clusters: %w", err)
	}
	sort.Slice(clusters.Items, func(i, j int) bool { return clusters.Items[i].Name < clusters.Items[j].Name })
	for _, cl := range clusters.Items {
		if v, ok := cl.Annotations[tkg.AnnotationTKGVersion]; ok {
			return v, nil
		}
	}
	return "", nil
}

func (c *Compatibility) metadata(ctx context.Context) (*CompatibilityMetadata, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: CompatibilityConfigMap}, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	data, ok := cm.BinaryData[CompatibilityKey]
	if !ok {
		return nil, nil
	}
	m := &CompatibilityMetadata{}
	if err := yaml.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("ConfigMap %s binaryData.%s: %w", klog.KRef(c.Namespace, CompatibilityConfigMap), CompatibilityKey, err)
	}
	return m, nil
}

func (c *Compatibility) additional(ctx context.Context) (sets.Set[string], error) {
	cms := &corev1.ConfigMapList{}
	if err := c.Client.List(ctx, cms, client.InNamespace(c.Namespace), client.HasLabels{LabelAdditionalTKRs}); err != nil {
		return nil, fmt.Errorf("failed to list ConfigMaps labelled %s: %w", LabelAdditionalTKRs, err)
	}
	out := sets.New[string]()
	for _, cm := range cms.Items {
		if !cm.DeletionTimestamp.IsZero() {
			continue
		}
		var versions []string
		if err := yaml.Unmarshal([]byte(cm.Data[AdditionalTKRsKey]), &versions); err != nil {
			// One bad ConfigMap does not hide the others; its author finds the error in the log.
			ctrl.LoggerFrom(ctx).Error(err, "Ignoring ConfigMap: data.tkrVersions must be a YAML list of TKR versions", "ConfigMap", cm.Namespace+"/"+cm.Name)
			continue
		}
		out.Insert(versions...)
	}
	return out, nil
}

// CompatibilityReconciler sets each release's Compatible condition.
type CompatibilityReconciler struct {
	Client        client.Client
	Compatibility *Compatibility
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// Reasons of the Events the compatibility reconciler records on releases.
const (
	ReasonCompatible   = "Compatible"
	ReasonIncompatible = "Incompatible"
)

// SetupWithManager registers the reconciler: releases, the compatibility ConfigMaps and the
// management Cluster's annotations all change the result.
func (r *CompatibilityReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("tkr-compatibility-controller")
	}
	ns := r.Compatibility.Namespace
	return ctrl.NewControllerManagedBy(mgr).
		Named("tkr_compatibility").
		For(&runv1alpha3.TanzuKubernetesRelease{}).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.allTKRs), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			_, additional := o.GetLabels()[LabelAdditionalTKRs]
			return o.GetNamespace() == ns && (o.GetName() == CompatibilityConfigMap || additional)
		}))).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.allTKRs), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			_, ok := o.GetLabels()[tkg.LabelManagementCluster]
			return ok
		}))).
		Complete(r)
}

func (r *CompatibilityReconciler) allTKRs(ctx context.Context, _ client.Object) []ctrl.Request {
	return AllTKRs(ctx, r.Client)
}

// AllTKRs returns a request for every release.
func AllTKRs(ctx context.Context, c client.Reader) []ctrl.Request {
	tkrs := &runv1alpha3.TanzuKubernetesReleaseList{}
	if err := c.List(ctx, tkrs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list TanzuKubernetesReleases")
		return nil
	}
	out := make([]ctrl.Request, len(tkrs.Items))
	for i := range tkrs.Items {
		out[i].Name = tkrs.Items[i].Name
	}
	return out
}

// Reconcile sets the release's Compatible condition.
func (r *CompatibilityReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tkr := &runv1alpha3.TanzuKubernetesRelease{}
	if err := r.Client.Get(ctx, req.NamespacedName, tkr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	compatible, why, err := r.Compatibility.CompatibleVersions(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	patch := client.MergeFromWithOptions(tkr.DeepCopy(), client.MergeFromWithOptimisticLock{})
	var was corev1.ConditionStatus // empty: never looked at
	if c := tkr.Status.Conditions.Get(runv1alpha3.ConditionCompatible); c != nil {
		was = c.Status
	}
	if compatible.Has(tkr.Spec.Version) {
		tkr.Status.Conditions.MarkTrue(runv1alpha3.ConditionCompatible)
	} else {
		tkr.Status.Conditions.MarkFalse(runv1alpha3.ConditionCompatible, ReasonNotInCompatibilityMetadata, runv1alpha3.ConditionSeverityWarning,
			fmt.Sprintf("TKR %s is not compatible with this management cluster: %s", tkr.Spec.Version, why))
	}
	if err := r.Client.Status().Patch(ctx, tkr, patch); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	// A release that comes or goes for this management cluster is worth an Event; the first look
	// at a compatible release is not (it was installed because it is).
	now := tkr.Status.Conditions.Get(runv1alpha3.ConditionCompatible)
	switch {
	case was == now.Status:
	case now.Status == corev1.ConditionTrue && was != "":
		r.Recorder.Eventf(tkr, nil, corev1.EventTypeNormal, ReasonCompatible, "Check", "TKR %s is compatible with this management cluster again", tkr.Spec.Version)
	case now.Status != corev1.ConditionTrue:
		r.Recorder.Eventf(tkr, nil, corev1.EventTypeWarning, ReasonIncompatible, "Check", "%s", now.Message)
	}
	return ctrl.Result{}, nil
}
