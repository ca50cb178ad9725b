package certmanager

// The Issuer and ClusterIssuer controller: what cert-manager's issuers and clusterissuers
// controllers do with an issuer's Setup. It reports whether an issuer can sign in its Ready
// condition, written once, when it changed, and tells each change with an Event.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/slipway-dev/slipway/internal/pki"
)

// Reasons of an issuer's Ready condition and Events, cert-manager's but for UnsupportedIssuer.
const (
	// ReasonIsReady says a selfSigned issuer can sign.
	ReasonIsReady = "IsReady"
	// ReasonKeyPairVerified says a ca issuer's Secret holds a CA's key pair.
	ReasonKeyPairVerified = "KeyPairVerified"
	// ReasonErrGetKeyPair says a ca issuer's Secret is missing or holds no key pair.
	ReasonErrGetKeyPair = "ErrGetKeyPair"
	// ReasonErrInvalidKeyPair says a ca issuer's Secret holds a key pair that is not a CA's.
	ReasonErrInvalidKeyPair = "ErrInvalidKeyPair"
	// ReasonUnsupportedIssuer says the issuer is of a type slipway's cert-manager does not
	// sign with.
	ReasonUnsupportedIssuer = "UnsupportedIssuer"
)

// messageErrGetKeyPair starts the message of a ca issuer that cannot sign, as cert-manager's.
const messageErrGetKeyPair = "Error getting keypair for CA issuer: "

// IssuerReconciler reports whether Issuers, or ClusterIssuers, can sign: a selfSigned one always
// can, a ca one once its Secret holds a CA's key pair.
type IssuerReconciler struct {
	Client client.Client
	// GVK is IssuerGVK or ClusterIssuerGVK.
	GVK schema.GroupVersionKind
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
	// Clock tells the time of condition changes; nil is the real clock.
	Clock clock.PassiveClock
	// ClusterResourceNamespace holds ClusterIssuers' Secrets; empty is
	// DefaultClusterResourceNamespace.
	ClusterResourceNamespace string
}

// SetupWithManager registers the reconciler; a change of a ca issuer's Secret reconciles the
// issuer again.
func (r *IssuerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("cert-manager-" + strings.ToLower(r.GVK.Kind) + "s")
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.ClusterResourceNamespace == "" {
		r.ClusterResourceNamespace = DefaultClusterResourceNamespace
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named(strings.ToLower(r.GVK.Kind)+"s").
		For(newObject(r.GVK)).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.issuersOfSecret)).
		Complete(r)
}

// namespace is where an issuer's Secret lives: its own namespace, or for a ClusterIssuer the
// cluster resource namespace.
func (r *IssuerReconciler) namespace(issuer client.Object) string {
	if r.GVK.Kind == ClusterIssuerGVK.Kind {
		return r.ClusterResourceNamespace
	}
	return issuer.GetNamespace()
}

// issuersOfSecret maps a Secret to the ca issuers that sign with it.
func (r *IssuerReconciler) issuersOfSecret(ctx context.Context, o client.Object) []ctrl.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.GVK.GroupVersion().WithKind(r.GVK.Kind + "List"))
	var opts []client.ListOption
	if r.GVK.Kind == IssuerGVK.Kind {
		opts = append(opts, client.InNamespace(o.GetNamespace()))
	} else if o.GetNamespace() != r.ClusterResourceNamespace {
		return nil
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list issuers", "kind", r.GVK.Kind)
		return nil
	}
	var reqs []ctrl.Request
	for i := range list.Items {
		var spec issuerSpec
		if err := readField(&list.Items[i], "spec", &spec); err == nil && spec.CA != nil && spec.CA.SecretName == o.GetName() {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// Reconcile verifies the issuer and writes its Ready condition once, when it changed.
func (r *IssuerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	issuer := newObject(r.GVK)
	if err := r.Client.Get(ctx, req.NamespacedName, issuer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues(r.GVK.Kind, klog.KObj(issuer)))
	// The status is read twice: before stays as it was, status becomes what the pass finds.
	var before, status issuerStatus
	if err := readField(issuer, "status", &before); err != nil {
		ctrl.LoggerFrom(ctx).Info("Rewriting unreadable status", "error", err.Error())
	} else {
		_ = readField(issuer, "status", &status)
	}
	helper, err := patch.NewHelper(issuer, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	reason, message, verr := r.verify(ctx, issuer)
	setReady(&status.Conditions, issuer.GetGeneration(), r.Clock.Now(), verr, reason, message)
	if equality.Semantic.DeepEqual(before, status) {
		return ctrl.Result{}, transient(verr)
	}
	if readyChanged(before.Conditions, status.Conditions) {
		r.recordReady(issuer, status)
	}
	if err := writeField(issuer, "status", &status); err != nil {
		return ctrl.Result{}, err
	}
	if err := helper.Patch(ctx, issuer); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, kerrors.NewAggregate([]error{transient(verr), fmt.Errorf("failed to patch %s %s: %w", r.GVK.Kind, klog.KObj(issuer), err)})
	}
	return ctrl.Result{}, transient(verr)
}

// transient returns err unless the Ready condition reports it: a watch (of the spec, or of the
// Secret) brings the issuer back when that changes.
func transient(err error) error {
	var ce *conditionError
	if errors.As(err, &ce) {
		return nil
	}
	return err
}

// recordReady tells a change of the Ready condition as cert-manager does: a Normal Event when a
// ca issuer's key pair is verified, a Warning Event when an issuer cannot sign.
func (r *IssuerReconciler) recordReady(issuer *unstructured.Unstructured, status issuerStatus) {
	ready := meta.FindStatusCondition(status.Conditions, ConditionReady)
	switch {
	case ready.Status != "True":
		r.Recorder.Eventf(issuer, nil, corev1.EventTypeWarning, ready.Reason, "Verify", "%s", ready.Message)
	case ready.Reason == ReasonKeyPairVerified:
		r.Recorder.Eventf(issuer, nil, corev1.EventTypeNormal, ready.Reason, "Verify", "%s", ready.Message)
	}
}

// verify says whether the issuer can sign, with the reason and message of its Ready condition;
// what prevents it is an error carrying its reason.
func (r *IssuerReconciler) verify(ctx context.Context, issuer *unstructured.Unstructured) (reason, message string, err error) {
	var spec issuerSpec
	if err := readField(issuer, "spec", &spec); err != nil {
		return "", "", withReason(ReasonUnsupportedIssuer, err)
	}
	switch {
	case spec.SelfSigned != nil:
		return ReasonIsReady, "self-signed issuer ready", nil
	case spec.CA != nil:
		ca, err := caKeyPair(ctx, r.Client, r.namespace(issuer), spec.CA.SecretName)
		if status := apierrors.APIStatus(nil); errors.As(err, &status) && !apierrors.IsNotFound(err) {
			// Transient: the condition stays as it was.
			return "", "", err
		}
		if err != nil {
			return "", "", &conditionError{reason: ReasonErrGetKeyPair, err: err, message: messageErrGetKeyPair + err.Error()}
		}
		if !ca.Cert.IsCA {
			return "", "", &conditionError{reason: ReasonErrInvalidKeyPair, err: errors.New("certificate is not a CA"),
				message: messageErrGetKeyPair + "certificate is not a CA"}
		}
		return ReasonKeyPairVerified, "Signing CA verified", nil
	}
	return "", "", withReason(ReasonUnsupportedIssuer, errors.New("only selfSigned and ca issuers are supported by slipway's cert-manager"))
}

// caKeyPair reads the key pair a ca issuer signs with from its Secret's tls.crt and tls.key.
func caKeyPair(ctx context.Context, c client.Reader, namespace, name string) (*pki.KeyPair, error) {
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, secret); err != nil {
		return nil, err
	}
	kp, err := pki.ParseKeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", namespace, name, err)
	}
	return kp, nil
}
