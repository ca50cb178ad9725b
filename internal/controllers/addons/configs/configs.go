// Package configs holds the *Config controllers of seeds/002: each turns a KappControllerConfig,
// AntreaConfig, CalicoConfig, VSphereCPIConfig or VSphereCSIConfig of a cluster into that
// package's values Secret {cluster}-{package}-data-values, computed from the object's spec and
// its Cluster (networks, IP family, CoreDNS address, vSphere endpoint and credentials), and names
// the Secret in status.secretRef. Objects annotated tkg.tanzu.vmware.com/template-config are
// parts of a ClusterBootstrapTemplate and are skipped.
package configs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/controllers/eventonce"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// Config is one *Config kind and how its values are made.
type Config[T client.Object] struct {
	Client client.Client
	// Package is the short name of the package the kind configures (antrea).
	Package string
	// New returns an empty object of the kind.
	New func() T
	// Values computes the package's values from the object and its Cluster.
	Values func(ctx context.Context, c client.Client, cluster *clusterv1.Cluster, obj T) (any, error)
	// SecretRef reads and SetSecretRef writes status.secretRef.
	SecretRef    func(T) string
	SetSecretRef func(T, string)
	// Recorder records an Event on the object when its values are written or cannot be
	// computed; the manager's when nil.
	Recorder events.EventRecorder
	warnings eventonce.Warnings
}

// Reasons of the Events recorded on a *Config.
const (
	// ReasonValuesWritten: the package's values Secret was written (created or changed).
	ReasonValuesWritten = "ValuesWritten"
	// ReasonValuesFailed: the values could not be computed (a missing infrastructure object or
	// credentials Secret, say); the note says what.
	ReasonValuesFailed = "ValuesFailed"
)

// SetupWithManager registers the controller; a change of a Cluster recomputes its objects, a
// change of credentials (a Secret with a username and a password, such as a vSphere cluster's
// identity, which `credentials update` rotates) those of its namespace, and a change of a
// values Secret the object that wrote it.
func (r *Config[T]) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder(r.Package + "-config-controller")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(r.Package+"_config").
		For(r.New()).
		Watches(&clusterv1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.ofCluster)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.ofCredentials)).
		// The values Secret it wrote: a change, such as its owner reference removed, is mended.
		Watches(&corev1.Secret{}, handler.EnqueueRequestForOwner(mgr.GetScheme(), mgr.GetRESTMapper(), r.New())).
		Complete(r)
}

func (r *Config[T]) ofCluster(ctx context.Context, o client.Object) []ctrl.Request {
	return r.configs(ctx, o.GetNamespace(), func(cluster string) bool { return cluster == o.GetName() })
}

// configs are the objects of the namespace that configure a cluster of which match is true.
func (r *Config[T]) configs(ctx context.Context, namespace string, match func(cluster string) bool) []ctrl.Request {
	var out []ctrl.Request
	list := &metav1.PartialObjectMetadataList{}
	gvk, err := r.Client.GroupVersionKindFor(r.New())
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Unknown config kind")
		return nil
	}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list configs")
		return nil
	}
	for _, item := range list.Items {
		if name, ok := clusterName(&item); ok && match(name) {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&item)})
		}
	}
	return out
}

// ofCredentials are the objects of a Secret's namespace when it holds credentials: which
// clusters' identity it is takes reading their infrastructure, which Reconcile does.
func (r *Config[T]) ofCredentials(ctx context.Context, o client.Object) []ctrl.Request {
	s, ok := o.(*corev1.Secret)
	if !ok || s.Data["username"] == nil || s.Data["password"] == nil {
		return nil
	}
	return r.configs(ctx, o.GetNamespace(), func(string) bool { return true })
}

// clusterName is the Cluster an object configures: its owner of kind Cluster, else its
// tkg.tanzu.vmware.com/cluster-name label.
func clusterName(o client.Object) (string, bool) {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "Cluster" && ref.APIVersion == clusterv1.GroupVersion.String() {
			return ref.Name, true
		}
	}
	name, ok := o.GetLabels()[tkg.LabelClusterName]
	return name, ok && name != ""
}

// Reconcile writes the object's values Secret and its status.secretRef.
func (r *Config[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.New()
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, template := obj.GetAnnotations()[tkg.AnnotationTemplateConfig]; template || !obj.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	name, ok := clusterName(obj)
	if !ok {
		// Nothing to compute from until the ClusterBootstrap controller gives it a Cluster.
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	values, err := r.Values(ctx, r.Client, cluster, obj)
	if err != nil {
		r.warnings.Warn(r.Recorder, obj, cluster, ReasonValuesFailed, "ComputeValues", "Failed to compute the %s values: %v", r.Package, err)
		return ctrl.Result{}, fmt.Errorf("%s %s: %w", r.Package, req.NamespacedName, err)
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		return ctrl.Result{}, err
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: obj.GetNamespace(), Name: tkg.DataValuesSecretName(cluster.Name, r.Package)}}
	op, err := controllerutil.CreateOrPatch(ctx, r.Client, s, func() error {
		// A Secret's type cannot change. On a management cluster that manages itself, the
		// ClusterBootstrap controller's copy of these values on the "workload" cluster is this
		// very Secret (same namespace, same name), written as Opaque by the bootstrap cluster
		// before the move: its type is kept, its data and labels are the values', as in TKG.
		if s.CreationTimestamp.IsZero() {
			s.Type = addons.SecretTypeClusterBootstrap
		}
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[tkg.LabelClusterName] = cluster.Name
		s.Labels[tkg.LabelPackageName] = r.Package
		s.Data = map[string][]byte{addons.ValuesKey: data}
		return controllerutil.SetOwnerReference(obj, s, r.Client.Scheme())
	})
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to write Secret %s: %w", klog.KObj(s), err)
	}
	r.warnings.Clear(obj)
	if op != controllerutil.OperationResultNone {
		r.Recorder.Eventf(obj, s, corev1.EventTypeNormal, ReasonValuesWritten, "WriteValues", "Wrote the %s values into Secret %s", r.Package, s.Name)
	}
	if r.SecretRef(obj) != s.Name {
		patch := client.MergeFrom(obj.DeepCopyObject().(client.Object))
		r.SetSecretRef(obj, s.Name)
		if err := r.Client.Status().Patch(ctx, obj, patch); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}
