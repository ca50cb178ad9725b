package certmanager

// The Certificate controller: what cert-manager's trigger, issuing and readiness controllers do
// together. It issues a Certificate's Secret when the Secret is missing, does not hold a key pair
// for the spec and issuer, or is due for renewal, and reports Ready, notBefore, notAfter,
// renewalTime and revision in one status write.

import (
	"context"
	"crypto"
	"crypto/x509"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/cluster-api/util/patch"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/slipway-dev/slipway/internal/pki"
)

// Reasons of a Certificate's Ready condition and Events; Ready and Issuing are cert-manager's.
const (
	// ReasonReady says the Secret holds a certificate for the spec that is not due for renewal.
	ReasonReady = "Ready"
	// ReasonInvalidSpec says the spec cannot be acted on until it is changed.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonIssuerNotReady says the issuer cannot sign yet.
	ReasonIssuerNotReady = "IssuerNotReady"
	// ReasonIssuing is the Event of an issuance: why it starts, then that it is done.
	ReasonIssuing = "Issuing"
	// ReasonInvalidRenewBefore is the Warning Event of a spec.renewBefore or
	// spec.renewBeforePercentage that cannot be honoured.
	ReasonInvalidRenewBefore = "InvalidRenewBefore"
)

const (
	messageReady  = "Certificate is up to date and has not expired"
	messageIssued = "The certificate has been successfully issued"
	// issuerRetryPeriod is how soon a Certificate whose issuer cannot sign is looked at again.
	issuerRetryPeriod = 5 * time.Second
)

// CertificateReconciler issues Certificates into their Secrets and renews them.
type CertificateReconciler struct {
	Client client.Client
	// APIReader reads a Secret past the cache before it is issued again; nil takes the
	// manager's.
	APIReader client.Reader
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
	// Clock tells the time of issuance, renewal and condition changes; nil is the real clock.
	Clock clock.PassiveClock
	// ClusterResourceNamespace holds ClusterIssuers' Secrets; empty is
	// DefaultClusterResourceNamespace.
	ClusterResourceNamespace string
}

// certificateScope is what one pass over a Certificate works with.
type certificateScope struct {
	cert *unstructured.Unstructured
	spec certificateSpec
	// duration is how long an issued certificate lasts.
	duration time.Duration
	// now is the time of the pass.
	now time.Time
	// issued is the certificate the Secret holds once the pass has issued what was due.
	issued *x509.Certificate
	// status is the status being computed, written once at the end of the pass.
	status certificateStatus
}

// SetupWithManager registers the reconciler; a change of a Certificate's Secret or issuer
// reconciles it again.
func (r *CertificateReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.APIReader == nil {
		r.APIReader = mgr.GetAPIReader()
	}
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("cert-manager-certificates")
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.ClusterResourceNamespace == "" {
		r.ClusterResourceNamespace = DefaultClusterResourceNamespace
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("certificates").
		For(newObject(CertificateGVK)).
		Owns(&corev1.Secret{}).
		Watches(newObject(IssuerGVK), handler.EnqueueRequestsFromMapFunc(r.certificatesOfIssuer)).
		Watches(newObject(ClusterIssuerGVK), handler.EnqueueRequestsFromMapFunc(r.certificatesOfIssuer)).
		Complete(r)
}

// certificatesOfIssuer maps an Issuer to the Certificates of its namespace that name it, and a
// ClusterIssuer to every Certificate that names it.
func (r *CertificateReconciler) certificatesOfIssuer(ctx context.Context, o client.Object) []ctrl.Request {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(CertificateGVK.GroupVersion().WithKind("CertificateList"))
	kind, opts := ClusterIssuerGVK.Kind, []client.ListOption{}
	if o.GetNamespace() != "" {
		kind, opts = IssuerGVK.Kind, append(opts, client.InNamespace(o.GetNamespace()))
	}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list Certificates")
		return nil
	}
	var reqs []ctrl.Request
	for i := range list.Items {
		var spec certificateSpec
		if err := readField(&list.Items[i], "spec", &spec); err != nil {
			continue
		}
		if spec.IssuerRef.Name == o.GetName() && spec.IssuerRef.kind() == kind {
			reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return reqs
}

// Reconcile issues the Certificate's Secret when it is due, and writes the Certificate's status
// once, when it changed.
func (r *CertificateReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, reterr error) {
	cert := newObject(CertificateGVK)
	if err := r.Client.Get(ctx, req.NamespacedName, cert); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cert.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	ctx = ctrl.LoggerInto(ctx, ctrl.LoggerFrom(ctx).WithValues("Certificate", klog.KObj(cert)))
	s := &certificateScope{cert: cert, now: r.Clock.Now()}
	// The status is read twice: before stays as it was, s.status becomes what the pass finds.
	var before certificateStatus
	if err := readField(cert, "status", &before); err != nil {
		ctrl.LoggerFrom(ctx).Info("Rewriting unreadable status", "error", err.Error())
	} else {
		_ = readField(cert, "status", &s.status)
	}
	helper, err := patch.NewHelper(cert, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	var phaseErr error
	defer func() {
		if err := r.patchStatus(ctx, s, helper, before, phaseErr); err != nil {
			result, reterr = ctrl.Result{}, kerrors.NewAggregate([]error{reterr, err})
		}
	}()
	result, phaseErr = r.reconcileNormal(ctx, s)
	return retry(ctx, result, phaseErr)
}

// patchStatus sets the Ready condition from the phases' error and writes the status, only when
// it changed; a Certificate that becomes not Ready is told with a Warning Event.
func (r *CertificateReconciler) patchStatus(ctx context.Context, s *certificateScope, helper *patch.Helper, before certificateStatus, phaseErr error) error {
	setReady(&s.status.Conditions, s.cert.GetGeneration(), s.now, phaseErr, ReasonReady, messageReady)
	if equality.Semantic.DeepEqual(before, s.status) {
		return nil
	}
	if ready := meta.FindStatusCondition(s.status.Conditions, ConditionReady); readyChanged(before.Conditions, s.status.Conditions) && ready.Status != metav1.ConditionTrue {
		r.Recorder.Eventf(s.cert, nil, corev1.EventTypeWarning, ready.Reason, "Issue", "%s", ready.Message)
	}
	err := writeField(s.cert, "status", &s.status)
	if err == nil {
		err = helper.Patch(ctx, s.cert)
	}
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to patch Certificate %s: %w", klog.KObj(s.cert), err)
	}
	return nil
}

// reconcileNormal reads the spec, issues the Secret if it is due, and records its validity; it
// looks again when the certificate is due for renewal.
func (r *CertificateReconciler) reconcileNormal(ctx context.Context, s *certificateScope) (ctrl.Result, error) {
	for _, phase := range []func(context.Context, *certificateScope) error{
		r.reconcileSpec,
		r.reconcileIssuance,
	} {
		if err := phase(ctx, s); err != nil {
			return ctrl.Result{}, err
		}
	}
	return r.reconcileValidity(s), nil
}

// reconcileSpec reads what the spec asks for. A spec that cannot be acted on is terminal: its
// change brings the Certificate back. A renewBefore that cannot be honoured is told once per
// generation, as a Warning Event, and renewal falls back to cert-manager's default.
func (r *CertificateReconciler) reconcileSpec(_ context.Context, s *certificateScope) error {
	if err := readField(s.cert, "spec", &s.spec); err != nil {
		return reconcile.TerminalError(withReason(ReasonInvalidSpec, err))
	}
	ref := s.spec.IssuerRef
	switch {
	case s.spec.SecretName == "" || ref.Name == "":
		return reconcile.TerminalError(withReason(ReasonInvalidSpec, errors.New("spec.secretName and spec.issuerRef.name are required")))
	case ref.group() != group:
		return reconcile.TerminalError(withReason(ReasonInvalidSpec, fmt.Errorf("spec.issuerRef.group %q is not supported by slipway's cert-manager: use %s", ref.Group, group)))
	case ref.kind() != IssuerGVK.Kind && ref.kind() != ClusterIssuerGVK.Kind:
		return reconcile.TerminalError(withReason(ReasonInvalidSpec, fmt.Errorf("spec.issuerRef.kind %q is not supported: use Issuer or ClusterIssuer", ref.Kind)))
	}
	d, err := s.spec.duration()
	if err == nil && d <= 0 {
		err = errors.New("not positive")
	}
	if err != nil {
		return reconcile.TerminalError(withReason(ReasonInvalidSpec, fmt.Errorf("spec.duration %q: %w: use a duration such as 2160h", s.spec.Duration, err)))
	}
	s.duration = d
	ready := meta.FindStatusCondition(s.status.Conditions, ConditionReady)
	if err := s.spec.ignoredRenewal(d); err != nil && (ready == nil || ready.ObservedGeneration != s.cert.GetGeneration()) {
		r.Recorder.Eventf(s.cert, nil, corev1.EventTypeWarning, ReasonInvalidRenewBefore, "ScheduleRenewal", "%v", err)
	}
	return nil
}

// reconcileIssuance issues the Secret when cert-manager's trigger policies would: it is missing,
// holds no valid key pair, was issued by another issuer or for other names, or is due for
// renewal. Each issuance is told by two Events, why it starts and that it is done.
func (r *CertificateReconciler) reconcileIssuance(ctx context.Context, s *certificateScope) error {
	key := client.ObjectKey{Namespace: s.cert.GetNamespace(), Name: s.spec.SecretName}
	existing, why, err := r.check(ctx, r.Client, key, s)
	if err == nil && why != "" {
		// The cache may not hold the Secret this controller has just written: ask the API server
		// before issuing again.
		existing, why, err = r.check(ctx, r.APIReader, key, s)
	}
	if err != nil || why == "" {
		s.issued = existing
		return err
	}
	kp, caPEM, err := r.issue(ctx, s)
	if err != nil {
		// The Ready condition tells why; Events tell issuances done.
		return err
	}
	if err := r.writeSecret(ctx, s, kp, caPEM); err != nil {
		return err
	}
	r.Recorder.Eventf(s.cert, nil, corev1.EventTypeNormal, ReasonIssuing, "Trigger", "%s", why)
	ctrl.LoggerFrom(ctx).Info("Issued certificate", "Secret", klog.KRef(key.Namespace, key.Name), "notAfter", kp.Cert.NotAfter, "reason", why)
	r.Recorder.Eventf(s.cert, nil, corev1.EventTypeNormal, ReasonIssuing, "Issue", messageIssued)
	s.issued = kp.Cert
	s.status.Revision = ptr.To(ptr.Deref(s.status.Revision, 0) + 1)
	return nil
}

// check reads the Secret through reader and says why it must be issued again, in
// cert-manager's words; when it need not be, it returns the certificate it holds.
func (r *CertificateReconciler) check(ctx context.Context, reader client.Reader, key client.ObjectKey, s *certificateScope) (*x509.Certificate, string, error) {
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, key, secret); apierrors.IsNotFound(err) {
		return nil, "Issuing certificate as Secret does not exist", nil
	} else if err != nil {
		return nil, "", fmt.Errorf("failed to get Secret %s: %w", key, err)
	}
	certPEM, keyPEM := secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey]
	switch {
	case len(keyPEM) == 0:
		return nil, "Issuing certificate as Secret does not contain a private key", nil
	case len(certPEM) == 0:
		return nil, "Issuing certificate as Secret does not contain a certificate", nil
	}
	kp, err := pki.ParseKeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Sprintf("Issuing certificate as Secret contains an invalid key pair: %v", err), nil
	}
	if pub, ok := kp.Key.Public().(interface{ Equal(crypto.PublicKey) bool }); !ok || !pub.Equal(kp.Cert.PublicKey) {
		return nil, "Issuing certificate as Secret contains a private key that does not match the certificate", nil
	}
	if previous := issuerOfSecret(secret); previous != s.spec.IssuerRef.String() {
		return nil, fmt.Sprintf("Issuing certificate as Secret was previously issued by %q", previous), nil
	}
	if v := violations(kp.Cert, s.spec); len(v) > 0 {
		return nil, fmt.Sprintf("Issuing certificate as Existing issued Secret is not up to date for spec: %v", v), nil
	}
	if renewal := renewalTime(kp.Cert.NotBefore, kp.Cert.NotAfter, s.spec); !s.now.Before(renewal) {
		return nil, fmt.Sprintf("Renewing certificate as renewal was scheduled at %s", renewal.UTC().Format(time.RFC3339)), nil
	}
	return kp.Cert, "", nil
}

// issuerOfSecret names the issuer a Secret's annotations say issued it.
func issuerOfSecret(secret *corev1.Secret) string {
	a := secret.Annotations
	return issuerRef{Name: a[AnnotationIssuerName], Kind: a[AnnotationIssuerKind], Group: a[AnnotationIssuerGroup]}.String()
}

// violations lists the fields of the spec an issued certificate does not match.
func violations(cert *x509.Certificate, spec certificateSpec) []string {
	var v []string
	if cert.Subject.CommonName != spec.commonName() {
		v = append(v, "spec.commonName")
	}
	got, want := slices.Sorted(slices.Values(cert.DNSNames)), slices.Sorted(slices.Values(spec.DNSNames))
	if !slices.Equal(got, want) {
		v = append(v, "spec.dnsNames")
	}
	if cert.IsCA != spec.IsCA {
		v = append(v, "spec.isCA")
	}
	return v
}

// renewalTime is when a certificate valid from notBefore to notAfter is renewed, as
// cert-manager's pki.RenewalTime has it: spec.renewBefore before its end when that is shorter
// than its life, else spec.renewBeforePercentage of its life before its end when that is
// between 0 and 100, else two thirds into its life; truncated to the second, as
// status.renewalTime keeps it.
func renewalTime(notBefore, notAfter time.Time, spec certificateSpec) time.Time {
	life := notAfter.Sub(notBefore)
	before := life / 3
	if rb, p := spec.renewBefore(), spec.renewBeforePercentage(); rb > 0 && rb < life {
		before = rb
	} else if p > 0 && p < 100 {
		before = time.Duration(float64(life) * float64(p) / 100)
	}
	return notAfter.Add(-before).Truncate(time.Second)
}

// issue signs a certificate for the spec, valid from now for the spec's duration, as the
// Certificate's issuer does, and returns it with the CA that verifies it.
func (r *CertificateReconciler) issue(ctx context.Context, s *certificateScope) (*pki.KeyPair, []byte, error) {
	ref := s.spec.IssuerRef
	notReady := func(err error) error {
		return &conditionError{reason: ReasonIssuerNotReady, err: err, retryAfter: issuerRetryPeriod}
	}
	issuer, namespace := newObject(IssuerGVK), s.cert.GetNamespace()
	if ref.kind() == ClusterIssuerGVK.Kind {
		issuer, namespace = newObject(ClusterIssuerGVK), r.ClusterResourceNamespace
	} else {
		issuer.SetNamespace(namespace)
	}
	issuer.SetName(ref.Name)
	if err := r.Client.Get(ctx, client.ObjectKeyFromObject(issuer), issuer); err != nil {
		return nil, nil, notReady(fmt.Errorf("%s %s: %w", ref.kind(), ref.Name, err))
	}
	var spec issuerSpec
	if err := readField(issuer, "spec", &spec); err != nil {
		return nil, nil, notReady(err)
	}
	certSpec := pki.CertSpec{CommonName: s.spec.commonName(), DNSNames: s.spec.DNSNames, Usages: pki.ServerClientUsage,
		NotBefore: s.now, NotAfter: s.now.Add(s.duration)}
	switch {
	case spec.SelfSigned != nil:
		kp, err := pki.SelfSign(certSpec, s.spec.IsCA, s.duration)
		if err != nil {
			return nil, nil, err
		}
		return kp, kp.CertPEM(), nil
	case spec.CA != nil:
		ca, err := caKeyPair(ctx, r.Client, namespace, spec.CA.SecretName)
		if err != nil {
			return nil, nil, notReady(fmt.Errorf("%s %s: %w", ref.kind(), ref.Name, err))
		}
		issue := ca.Issue
		if s.spec.IsCA {
			issue = ca.IssueCA
		}
		kp, err := issue(certSpec)
		if err != nil {
			return nil, nil, err
		}
		return kp, ca.CertPEM(), nil
	}
	return nil, nil, notReady(fmt.Errorf("%s %s is neither selfSigned nor ca: only those issuer types are supported by slipway's cert-manager", ref.kind(), ref.Name))
}

// writeSecret stores an issued key pair and its CA in the Certificate's Secret, annotated as
// cert-manager annotates it and owned by the Certificate.
func (r *CertificateReconciler) writeSecret(ctx context.Context, s *certificateScope, kp *pki.KeyPair, caPEM []byte) error {
	keyPEM, err := kp.KeyPEM()
	if err != nil {
		return err
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: s.cert.GetNamespace(), Name: s.spec.SecretName}}
	if _, err := controllerutil.CreateOrPatch(ctx, r.Client, secret, func() error {
		secret.Type = corev1.SecretTypeTLS
		if secret.Annotations == nil {
			secret.Annotations = map[string]string{}
		}
		secret.Annotations[AnnotationCertificateName] = s.cert.GetName()
		secret.Annotations[AnnotationIssuerName] = s.spec.IssuerRef.Name
		secret.Annotations[AnnotationIssuerKind] = s.spec.IssuerRef.kind()
		secret.Annotations[AnnotationIssuerGroup] = s.spec.IssuerRef.group()
		secret.Annotations[AnnotationCommonName] = s.spec.CommonName
		secret.Annotations[AnnotationAltNames] = strings.Join(s.spec.DNSNames, ",")
		secret.Data = map[string][]byte{corev1.TLSCertKey: kp.CertPEM(), corev1.TLSPrivateKeyKey: keyPEM, KeyCA: caPEM}
		return controllerutil.SetControllerReference(s.cert, secret, r.Client.Scheme())
	}); err != nil {
		return fmt.Errorf("failed to write Secret %s: %w", klog.KObj(secret), err)
	}
	return nil
}

// reconcileValidity records the issued certificate's validity and renewal time, and looks again
// at the renewal time.
func (r *CertificateReconciler) reconcileValidity(s *certificateScope) ctrl.Result {
	renewal := renewalTime(s.issued.NotBefore, s.issued.NotAfter, s.spec)
	s.status.NotBefore = ptr.To(metav1.NewTime(s.issued.NotBefore))
	s.status.NotAfter = ptr.To(metav1.NewTime(s.issued.NotAfter))
	s.status.RenewalTime = ptr.To(metav1.NewTime(renewal))
	return ctrl.Result{RequeueAfter: renewal.Sub(s.now)}
}
