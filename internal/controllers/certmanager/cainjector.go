package certmanager

// The CA injector: what cert-manager's cainjector does. It keeps the caBundle of annotated webhook
// configurations and CRD conversion webhooks equal to the CA of the Certificate or Secret they
// name.

import (
	"context"
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
)

// ReasonInjectedCA is the Event of an object given a new CA bundle.
const ReasonInjectedCA = "InjectedCA"

// Injectable is a kind the CA injector writes caBundles into.
type Injectable = client.Object

// CAInjector keeps the caBundle of annotated webhook configurations and CRDs equal to the CA of
// the Certificate (inject-ca-from) or Secret (inject-ca-from-secret) they name.
type CAInjector struct {
	Client client.Client
	// Object is the kind it injects into: ValidatingWebhookConfiguration,
	// MutatingWebhookConfiguration or CustomResourceDefinition.
	Object client.Object
	// Recorder records the Events users see; nil takes the manager's.
	Recorder events.EventRecorder
}

// SetupWithManager registers the injector; a change of any Secret reconciles the objects that
// name it (or its Certificate).
func (r *CAInjector) SetupWithManager(mgr ctrl.Manager) error {
	if r.Recorder == nil {
		r.Recorder = mgr.GetEventRecorder("cert-manager-cainjector")
	}
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
		ctrl.LoggerFrom(ctx).Error(err, "Failed to list objects to inject into", "kind", gvk.Kind)
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

// Reconcile injects the CA, writing the object only when a caBundle differs from it, and tells
// each injection with an Event.
func (r *CAInjector) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.Object.DeepCopyObject().(client.Object)
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	caPEM, source, err := r.caFor(ctx, obj.GetAnnotations())
	if err != nil || caPEM == nil {
		// Not annotated, or the CA is not issued yet: the Secret's creation reconciles again.
		return ctrl.Result{}, err
	}
	before := obj.DeepCopyObject().(client.Object)
	injected := 0
	set := func(bundle *[]byte) {
		if string(*bundle) != string(caPEM) {
			*bundle = caPEM
			injected++
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
	if injected == 0 {
		return ctrl.Result{}, nil
	}
	if err := r.Client.Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, fmt.Errorf("failed to inject CA into %T %s: %w", obj, obj.GetName(), err)
	}
	if obj.GetResourceVersion() == before.GetResourceVersion() {
		// The cache was behind: the object already had the CA.
		return ctrl.Result{}, nil
	}
	ctrl.LoggerFrom(ctx).Info("Injected CA", "object", klog.KObj(obj), "source", source)
	r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, ReasonInjectedCA, "Inject", "Injected the CA of %s into %d caBundle(s)", source, injected)
	return ctrl.Result{}, nil
}

// caFor returns the CA an object's annotations name and what holds it (Certificate or Secret
// ns/name); nil when it names none or the CA is not issued yet.
func (r *CAInjector) caFor(ctx context.Context, annotations map[string]string) ([]byte, string, error) {
	ref, fromCert := annotations[AnnotationInjectCAFrom], true
	if ref == "" {
		ref, fromCert = annotations[AnnotationInjectCAFromSecret], false
	}
	if ref == "" {
		return nil, "", nil
	}
	namespace, name, ok := strings.Cut(ref, "/")
	if !ok {
		return nil, "", fmt.Errorf("annotation value %q is not <namespace>/<name>", ref)
	}
	source, secretName := "Secret "+ref, name
	if fromCert {
		cert := newObject(CertificateGVK)
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cert); err != nil {
			return nil, "", client.IgnoreNotFound(err)
		}
		source = "Certificate " + ref
		secretName, _, _ = unstructured.NestedString(cert.Object, "spec", "secretName")
	}
	secret := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName}, secret); err != nil {
		return nil, "", client.IgnoreNotFound(err)
	}
	if ca := secret.Data[KeyCA]; len(ca) > 0 {
		return ca, source, nil
	}
	if crt := secret.Data[corev1.TLSCertKey]; len(crt) > 0 {
		return crt, source, nil
	}
	return nil, "", fmt.Errorf("secret %s/%s has neither ca.crt nor tls.crt", namespace, secretName)
}
