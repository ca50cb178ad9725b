package tanzuauth

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/controllers/addons"
	"github.com/slipway-dev/slipway/internal/tkg"
)

// PinnipedInfo is the ConfigMap that describes the management cluster's Pinniped supervisor;
// its keys are IssuerKey and IssuerCABundleKey.
var PinnipedInfo = types.NamespacedName{Namespace: "kube-public", Name: "pinniped-info"}

const (
	IssuerKey         = "issuer"
	IssuerCABundleKey = "issuer_ca_bundle_data"

	// pinnipedPackage is what the package-name label of a pinniped values Secret contains.
	pinnipedPackage = "pinniped"
)

// infrastructureWait is how often the values of a Cluster that has no infrastructure yet are
// looked at again.
const infrastructureWait = 2 * time.Second

// infrastructureProviders maps a Cluster's infrastructure kind to the pinniped package's
// infrastructure_provider value.
var infrastructureProviders = map[string]string{
	"VSphereCluster": "vsphere",
	"AWSCluster":     "aws",
	"AzureCluster":   "azure",
	"DockerCluster":  "docker",
	"LocalCluster":   "local",
}

// ReasonPinnipedValuesWritten is the Event of a workload cluster's pinniped values written
// from the management cluster's identity management.
const ReasonPinnipedValuesWritten = "PinnipedValuesWritten"

// CascadeReconciler writes the pinniped values of workload clusters: it reconciles the
// clusterbootstrap Secrets whose package-name label names pinniped, and all of them again when
// kube-public/pinniped-info changes.
type CascadeReconciler struct {
	Client client.Client
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

func (r *CascadeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("tanzu-auth-cascade")
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("tanzu-auth-cascade").
		For(&corev1.Secret{}, builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return isPinnipedValues(o.(*corev1.Secret))
		}))).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.allSecrets), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == PinnipedInfo.Namespace && o.GetName() == PinnipedInfo.Name
		}))).
		Complete(r)
}

func isPinnipedValues(s *corev1.Secret) bool {
	return s.Type == addons.SecretTypeClusterBootstrap && strings.Contains(s.Labels[tkg.LabelPackageName], pinnipedPackage)
}

func (r *CascadeReconciler) allSecrets(ctx context.Context, _ client.Object) []ctrl.Request {
	secrets := &corev1.SecretList{}
	if err := r.Client.List(ctx, secrets, client.HasLabels{tkg.LabelPackageName}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list pinniped values Secrets")
		return nil
	}
	var reqs []ctrl.Request
	for i := range secrets.Items {
		if isPinnipedValues(&secrets.Items[i]) {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&secrets.Items[i])})
		}
	}
	return reqs
}

func (r *CascadeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, req.NamespacedName, secret); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !secret.DeletionTimestamp.IsZero() || !isPinnipedValues(secret) {
		return ctrl.Result{}, nil
	}
	clusterName := clusterOf(secret)
	if clusterName == "" {
		ctrl.LoggerFrom(ctx).Info("Pinniped values Secret names no Cluster (owner reference or label " + tkg.LabelClusterName + "); left alone")
		return ctrl.Result{}, nil
	}
	cluster := &clusterv1.Cluster{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: secret.Namespace, Name: clusterName}, cluster); err != nil {
		// A Secret restored before its Cluster waits for it: the audience names the Cluster's UID.
		return ctrl.Result{}, fmt.Errorf("failed to get Cluster %s of pinniped values Secret %s: %w", klog.KRef(secret.Namespace, clusterName), klog.KObj(secret), err)
	}
	if _, ok := cluster.Labels[tkg.LabelManagementCluster]; ok || !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if !cluster.Spec.InfrastructureRef.IsDefined() {
		// A ClusterClass Cluster gets its infrastructure from the topology controller a moment
		// after it is created: its provider is not guessed meanwhile.
		return ctrl.Result{RequeueAfter: infrastructureWait}, nil
	}
	info := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, PinnipedInfo, info); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		info = nil
	}
	values, err := workloadValues(secret.Data[addons.ValuesKey], cluster, info)
	if err != nil {
		// Only an edit of the Secret, which brings it back, can mend its values.
		return ctrl.Result{}, reconcile.TerminalError(fmt.Errorf("pinniped values Secret %s: %w", klog.KObj(secret), err))
	}
	if bytes.Equal(values, secret.Data[addons.ValuesKey]) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(secret.DeepCopy())
	if secret.Data == nil {
		secret.Data = map[string][]byte{}
	}
	secret.Data[addons.ValuesKey] = values
	if err := r.Client.Patch(ctx, secret, patch); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Pinniped values written", "Cluster", klog.KObj(cluster), "identityManagement", identityType(info))
	r.Recorder.Eventf(secret, cluster, corev1.EventTypeNormal, ReasonPinnipedValuesWritten, "Write",
		"Pinniped values of cluster %s written from the management cluster: identity management %s", cluster.Name, identityType(info))
	return ctrl.Result{}, nil
}

// clusterOf names the Cluster a values Secret belongs to: its Cluster owner, else its
// cluster-name label.
func clusterOf(s *corev1.Secret) string {
	for _, ref := range s.OwnerReferences {
		if ref.Kind == "Cluster" {
			return ref.Name
		}
	}
	return s.Labels[tkg.LabelClusterName]
}

func identityType(info *corev1.ConfigMap) string {
	if info == nil {
		return "none"
	}
	return "oidc"
}

// workloadValues sets the keys the cascade owns in a pinniped values document and keeps every
// other key the document has.
func workloadValues(current []byte, cluster *clusterv1.Cluster, info *corev1.ConfigMap) ([]byte, error) {
	values := map[string]any{}
	if len(current) > 0 {
		if err := yaml.Unmarshal(current, &values); err != nil {
			return nil, fmt.Errorf("%s is not a YAML mapping: %w", addons.ValuesKey, err)
		}
		if values == nil {
			values = map[string]any{}
		}
	}
	provider, ok := infrastructureProviders[cluster.Spec.InfrastructureRef.Kind]
	if !ok {
		// TKG keeps what the Secret says, else assumes vSphere.
		provider, _ = values["infrastructure_provider"].(string)
		if provider == "" {
			provider = "vsphere"
		}
	}
	values["identity_management_type"] = identityType(info)
	values["infrastructure_provider"] = provider
	values["tkg_cluster_role"] = "workload"
	pinniped, _ := values["pinniped"].(map[string]any)
	if pinniped == nil {
		pinniped = map[string]any{}
	}
	endpoint, bundle, audience := "", "", ""
	if info != nil {
		endpoint, bundle = info.Data[IssuerKey], info.Data[IssuerCABundleKey]
		audience = fmt.Sprintf("%s-%s", cluster.Name, cluster.UID)
	}
	pinniped["supervisor_svc_endpoint"] = endpoint
	pinniped["supervisor_ca_bundle_data"] = bundle
	pinniped["concierge"] = map[string]any{"audience": audience}
	values["pinniped"] = pinniped
	return yaml.Marshal(values)
}
