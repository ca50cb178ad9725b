// Package certmanager is slipway's stand-in for the part of cert-manager that Cluster API's
// providers use: Issuers and ClusterIssuers of kind selfSigned and ca, Certificates issued into
// Secrets (tls.crt, tls.key, ca.crt) and renewed before they expire, and CA injection into
// webhook configurations and CRDs annotated cert-manager.io/inject-ca-from(-secret). It reads and
// writes cert-manager.io/v1 objects as cert-manager does; cert-manager itself (v1.21) needs
// Kubernetes libraries newer than this stack's, so it cannot run in slipway's binary.
package certmanager

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/slipway-dev/slipway/internal/pki"
)

// cert-manager's API.
var (
	CertificateGVK   = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Certificate"}
	IssuerGVK        = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "Issuer"}
	ClusterIssuerGVK = schema.GroupVersionKind{Group: "cert-manager.io", Version: "v1", Kind: "ClusterIssuer"}
)

// Annotations cert-manager reads and writes.
const (
	AnnotationInjectCAFrom       = "cert-manager.io/inject-ca-from"
	AnnotationInjectCAFromSecret = "cert-manager.io/inject-ca-from-secret"
	AnnotationCertificateName    = "cert-manager.io/certificate-name"
	AnnotationIssuerName         = "cert-manager.io/issuer-name"
	AnnotationIssuerKind         = "cert-manager.io/issuer-kind"
	AnnotationIssuerGroup        = "cert-manager.io/issuer-group"
	AnnotationCommonName         = "cert-manager.io/common-name"
	AnnotationAltNames           = "cert-manager.io/alt-names"
	// KeyCA is the CA's certificate in an issued Secret.
	KeyCA = "ca.crt"
)

// defaultDuration is a Certificate's lifetime when spec.duration is not set, as cert-manager's.
const defaultDuration = 90 * 24 * time.Hour

func newObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// CertificateReconciler issues Certificates.
type CertificateReconciler struct {
	Client client.Client
}

// SetupWithManager registers the reconciler; a change of an Issuer or of an issued Secret
// reconciles the Certificates concerned again.
func (r *CertificateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("certificates").
		For(newObject(CertificateGVK)).
		Owns(&corev1.Secret{}).
		Watches(newObject(IssuerGVK), handler.EnqueueRequestsFromMapFunc(r.certificatesInNamespace)).
		Complete(r)
}

func (r *CertificateReconciler) certificatesInNamespace(ctx context.Context, o client.Object) []ctrl.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(CertificateGVK.GroupVersion().WithKind("CertificateList"))
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for _, c := range list.Items {
		reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
	}
	return reqs
}

// certificateSpec is the part of a Certificate's spec that is honoured.
type certificateSpec struct {
	SecretName  string   `json:"secretName"`
	CommonName  string   `json:"commonName"`
	DNSNames    []string `json:"dnsNames"`
	IsCA        bool     `json:"isCA"`
	Duration    string   `json:"duration"`
	RenewBefore string   `json:"renewBefore"`
	IssuerRef   struct {
		Name  string `json:"name"`
		Kind  string `json:"kind"`
		Group string `json:"group"`
	} `json:"issuerRef"`
}

// Reconcile issues the Certificate's Secret when it is missing, does not match the spec, or is
// due for renewal (two thirds into its life, or renewBefore its end), and reports Ready.
func (r *CertificateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cert := newObject(CertificateGVK)
	if err := r.Client.Get(ctx, req.NamespacedName, cert); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	var spec certificateSpec
	if err := runtimeFromUnstructured(cert.Object["spec"], &spec); err != nil {
		return ctrl.Result{}, r.setReady(ctx, cert, metav1.ConditionFalse, "InvalidSpec", err.Error(), nil)
	}
	if spec.SecretName == "" || spec.IssuerRef.Name == "" {
		return ctrl.Result{}, r.setReady(ctx, cert, metav1.ConditionFalse, "InvalidSpec", "spec.secretName and spec.issuerRef.name are required", nil)
	}
	duration := defaultDuration
	if spec.Duration != "" {
		d, err := time.ParseDuration(spec.Duration)
		if err != nil {
			return ctrl.Result{}, r.setReady(ctx, cert, metav1.ConditionFalse, "InvalidSpec", fmt.Sprintf("spec.duration %q: %v", spec.Duration, err), nil)
		}
		duration = d
	}
	renewBefore := duration / 3
	if spec.RenewBefore != "" {
		if d, err := time.ParseDuration(spec.RenewBefore); err == nil {
			renewBefore = d
		}
	}
	secret := &corev1.Secret{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: cert.GetNamespace(), Name: spec.SecretName}, secret)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	if existing := parseCert(secret.Data[corev1.TLSCertKey]); existing != nil && matches(existing, spec) && time.Until(existing.NotAfter) > renewBefore {
		renewal := existing.NotAfter.Add(-renewBefore)
		return ctrl.Result{RequeueAfter: time.Until(renewal)}, r.setReady(ctx, cert, metav1.ConditionTrue, "Ready", "Certificate is up to date and has not expired", existing)
	}
	issued, caPEM, err := r.issue(ctx, cert.GetNamespace(), spec, duration)
	if err != nil {
		return ctrl.Result{RequeueAfter: 5 * time.Second}, r.setReady(ctx, cert, metav1.ConditionFalse, "IssuerNotReady", err.Error(), nil)
	}
	keyPEM, err := issued.KeyPEM()
	if err != nil {
		return ctrl.Result{}, err
	}
	secret.Namespace, secret.Name = cert.GetNamespace(), spec.SecretName
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
		secret.Type = corev1.SecretTypeTLS
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[AnnotationCertificateName] = cert.GetName()
		secret.Annotations[AnnotationIssuerName] = spec.IssuerRef.Name
		secret.Annotations[AnnotationIssuerKind] = issuerKind(spec)
		secret.Annotations[AnnotationIssuerGroup] = "cert-manager.io"
		secret.Annotations[AnnotationCommonName] = spec.CommonName
		secret.Annotations[AnnotationAltNames] = strings.Join(spec.DNSNames, ",")
		secret.Data = map[string][]byte{corev1.TLSCertKey: issued.CertPEM(), corev1.TLSPrivateKeyKey: keyPEM, KeyCA: caPEM}
		return controllerutil.SetControllerReference(cert, secret, r.Client.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Issued certificate", "secret", spec.SecretName, "notAfter", issued.Cert.NotAfter)
	return ctrl.Result{RequeueAfter: time.Until(issued.Cert.NotAfter.Add(-renewBefore))},
		r.setReady(ctx, cert, metav1.ConditionTrue, "Ready", "Certificate is up to date and has not expired", issued.Cert)
}

func issuerKind(spec certificateSpec) string {
	if spec.IssuerRef.Kind == "" {
		return IssuerGVK.Kind
	}
	return spec.IssuerRef.Kind
}

// issue signs a certificate as the Certificate's issuer does, and returns it with the CA to trust.
func (r *CertificateReconciler) issue(ctx context.Context, namespace string, spec certificateSpec, duration time.Duration) (*pki.KeyPair, []byte, error) {
	var issuer *unstructured.Unstructured
	switch issuerKind(spec) {
	case IssuerGVK.Kind:
		issuer = newObject(IssuerGVK)
		issuer.SetNamespace(namespace)
	case ClusterIssuerGVK.Kind:
		issuer = newObject(ClusterIssuerGVK)
		// A ClusterIssuer's CA secret lives in cert-manager's cluster resource namespace.
		namespace = "cert-manager"
	default:
		return nil, nil, fmt.Errorf("issuerRef.kind %q is not supported: use Issuer or ClusterIssuer", spec.IssuerRef.Kind)
	}
	issuer.SetName(spec.IssuerRef.Name)
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(issuer), issuer); err != nil {
		return nil, nil, fmt.Errorf("%s %s: %w", issuer.GetKind(), spec.IssuerRef.Name, err)
	}
	certSpec := pki.CertSpec{CommonName: spec.CommonName, DNSNames: spec.DNSNames, Usages: pki.ServerClientUsage}
	if certSpec.CommonName == "" && len(spec.DNSNames) > 0 {
		certSpec.CommonName = spec.DNSNames[0]
	}
	if _, ok, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); ok {
		kp, err := pki.SelfSign(certSpec, spec.IsCA, duration)
		if err != nil {
			return nil, nil, err
		}
		return kp, kp.CertPEM(), nil
	}
	if secretName, ok, _ := unstructured.NestedString(issuer.Object, "spec", "ca", "secretName"); ok {
		caSecret := &corev1.Secret{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, caSecret); err != nil {
			return nil, nil, fmt.Errorf("CA secret %s/%s of issuer %s: %w", namespace, secretName, spec.IssuerRef.Name, err)
		}
		ca, err := pki.ParseKeyPair(caSecret.Data[corev1.TLSCertKey], caSecret.Data[corev1.TLSPrivateKeyKey])
		if err != nil {
			return nil, nil, fmt.Errorf("CA secret %s/%s: %w", namespace, secretName, err)
		}
		kp, err := ca.Issue(certSpec)
		if err != nil {
			return nil, nil, err
		}
		return kp, ca.CertPEM(), nil
	}
	return nil, nil, fmt.Errorf("%s %s is neither selfSigned nor ca: only those issuer types are supported by slipway's cert-manager", issuer.GetKind(), spec.IssuerRef.Name)
}

func parseCert(data []byte) *x509.Certificate {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil
	}
	return cert
}

// matches says whether an issued certificate still has the names the spec asks for.
func matches(cert *x509.Certificate, spec certificateSpec) bool {
	if len(cert.DNSNames) != len(spec.DNSNames) {
		return false
	}
	for i := range spec.DNSNames {
		if cert.DNSNames[i] != spec.DNSNames[i] {
			return false
		}
	}
	return cert.IsCA == spec.IsCA
}

// setReady writes the Certificate's Ready condition and validity.
func (r *CertificateReconciler) setReady(ctx context.Context, cert *unstructured.Unstructured, status metav1.ConditionStatus, reason, message string, issued *x509.Certificate) error {
	before := cert.DeepCopy()
	conditions := readConditions(cert)
	meta.SetStatusCondition(&conditions, metav1.Condition{Type: "Ready", Status: status, Reason: reason, Message: message, ObservedGeneration: cert.GetGeneration()})
	writeConditions(cert, conditions)
	if issued != nil {
		_ = unstructured.SetNestedField(cert.Object, issued.NotBefore.UTC().Format(time.RFC3339), "status", "notBefore")
		_ = unstructured.SetNestedField(cert.Object, issued.NotAfter.UTC().Format(time.RFC3339), "status", "notAfter")
	}
	return r.Client.Status().Patch(ctx, cert, client.MergeFrom(before))
}

// IssuerReconciler reports Issuers and ClusterIssuers Ready when their type is supported.
type IssuerReconciler struct {
	Client client.Client
	GVK    schema.GroupVersionKind
}

// SetupWithManager registers the reconciler.
func (r *IssuerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(strings.ToLower(r.GVK.Kind) + "s").For(newObject(r.GVK)).Complete(r)
}

// Reconcile sets the Ready condition.
func (r *IssuerReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	issuer := newObject(r.GVK)
	if err := r.Client.Get(ctx, req.NamespacedName, issuer); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := issuer.DeepCopy()
	conditions := readConditions(issuer)
	cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "UnsupportedIssuer",
		Message: "only selfSigned and ca issuers are supported by slipway's cert-manager", ObservedGeneration: issuer.GetGeneration()}
	if _, ok, _ := unstructured.NestedMap(issuer.Object, "spec", "selfSigned"); ok {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "IsReady", "self-signed issuer ready"
	} else if name, ok, _ := unstructured.NestedString(issuer.Object, "spec", "ca", "secretName"); ok {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "KeyPairVerified", "Signing CA verified"
		ns := req.Namespace
		if ns == "" {
			ns = "cert-manager"
		}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &corev1.Secret{}); err != nil {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, "ErrGetKeyPair", fmt.Sprintf("Error getting keypair for CA issuer: %v", err)
		}
	}
	meta.SetStatusCondition(&conditions, cond)
	writeConditions(issuer, conditions)
	if err := r.Client.Status().Patch(ctx, issuer, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	if cond.Status != metav1.ConditionTrue {
		return ctrl.Result{RequeueAfter: 10 * time.Second}, nil
	}
	return ctrl.Result{}, nil
}

func readConditions(u *unstructured.Unstructured) []metav1.Condition {
	raw, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []metav1.Condition
	_ = runtimeFromUnstructured(raw, &out)
	return out
}

func writeConditions(u *unstructured.Unstructured, conditions []metav1.Condition) {
	var raw []any
	for _, c := range conditions {
		raw = append(raw, map[string]any{
			"type": c.Type, "status": string(c.Status), "reason": c.Reason, "message": c.Message,
			"lastTransitionTime": c.LastTransitionTime.UTC().Format(time.RFC3339), "observedGeneration": c.ObservedGeneration,
		})
	}
	_ = unstructured.SetNestedSlice(u.Object, raw, "status", "conditions")
}

// Injectable is a kind the CA injector writes caBundles into.
type Injectable = client.Object

// CAInjector keeps the caBundle of annotated webhook configurations and CRDs equal to the CA of
// the Certificate (inject-ca-from) or Secret (inject-ca-from-secret) they name.
type CAInjector struct {
	Client client.Client
	// Object is the kind it injects into: ValidatingWebhookConfiguration,
	// MutatingWebhookConfiguration or CustomResourceDefinition.
	Object client.Object
}

// SetupWithManager registers the injector; a change of any Secret reconciles the objects that
// name it (or its Certificate).
func (r *CAInjector) SetupWithManager(mgr ctrl.Manager) error {
	kind := fmt.Sprintf("%T", r.Object)
	kind = strings.ToLower(kind[strings.LastIndex(kind, ".")+1:])
	return ctrl.NewControllerManagedBy(mgr).Named("cainjector-"+kind).For(r.Object).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.objectsFor)).
		Complete(r)
}

// objectsFor maps a Secret to the objects that inject from it or from its Certificate.
func (r *CAInjector) objectsFor(ctx context.Context, o client.Object) []ctrl.Request {
	secretRef := o.GetNamespace() + "/" + o.GetName()
	certRef := ""
	if name := o.GetAnnotations()[AnnotationCertificateName]; name != "" {
		certRef = o.GetNamespace() + "/" + name
	}
	list := &metav1.PartialObjectMetadataList{}
	gvk, err := apiutil.GVKForObject(r.Object, r.Client.Scheme())
	if err != nil {
		return nil
	}
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err := r.Client.List(ctx, list); err != nil {
		return nil
	}
	var reqs []ctrl.Request
	for _, item := range list.Items {
		a := item.GetAnnotations()
		if a[AnnotationInjectCAFromSecret] == secretRef || (certRef != "" && a[AnnotationInjectCAFrom] == certRef) {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKey{Name: item.GetName()}})
		}
	}
	return reqs
}

// Reconcile injects the CA.
func (r *CAInjector) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Object.DeepCopyObject().(client.Object)
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	caPEM, err := r.caFor(ctx, obj.GetAnnotations())
	if err != nil || caPEM == nil {
		// Not annotated, or the CA is not issued yet: the Secret's creation reconciles again.
		return ctrl.Result{}, err
	}
	before := obj.DeepCopyObject().(client.Object)
	changed := false
	set := func(bundle *[]byte) {
		if string(*bundle) != string(caPEM) {
			*bundle, changed = caPEM, true
		}
	}
	switch o := obj.(type) {
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		for i := range o.Webhooks {
			set(&o.Webhooks[i].ClientConfig.CABundle)
		}
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		for i := range o.Webhooks {
			set(&o.Webhooks[i].ClientConfig.CABundle)
		}
	case *apiextensionsv1.CustomResourceDefinition:
		if o.Spec.Conversion == nil || o.Spec.Conversion.Webhook == nil || o.Spec.Conversion.Webhook.ClientConfig == nil {
			return ctrl.Result{}, nil
		}
		set(&o.Spec.Conversion.Webhook.ClientConfig.CABundle)
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("Injected CA", "object", obj.GetName())
	return ctrl.Result{}, nil
}

// caFor returns the CA an object's annotations name, nil when it names none or it is not issued.
func (r *CAInjector) caFor(ctx context.Context, annotations map[string]string) ([]byte, error) {
	ref, fromCert := annotations[AnnotationInjectCAFrom], true
	if ref == "" {
		ref, fromCert = annotations[AnnotationInjectCAFromSecret], false
	}
	if ref == "" {
		return nil, nil
	}
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok {
		return nil, fmt.Errorf("annotation value %q is not <namespace>/<name>", ref)
	}
	secretName := name
	if fromCert {
		cert := newObject(CertificateGVK)
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cert); err != nil {
			return nil, client.IgnoreNotFound(err)
		}
		secretName, _, _ = unstructured.NestedString(cert.Object, "spec", "secretName")
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if ca := secret.Data[KeyCA]; len(ca) > 0 {
		return ca, nil
	}
	if crt := secret.Data[corev1.TLSCertKey]; len(crt) > 0 {
		return crt, nil
	}
	return nil, errors.New("secret " + namespace + "/" + secretName + " has neither ca.crt nor tls.crt")
}
