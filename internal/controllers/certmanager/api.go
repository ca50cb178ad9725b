package certmanager

// The parts of cert-manager's cert-manager.io/v1 API that slipway reads and writes, and its names.
// The objects are handled as unstructured: cert-manager's Go types need Kubernetes libraries newer
// than slipway's.

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// group is cert-manager's API group.
const group = "cert-manager.io"

// cert-manager's API.
var (
	CertificateGVK   = schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Certificate"}
	IssuerGVK        = schema.GroupVersionKind{Group: group, Version: "v1", Kind: "Issuer"}
	ClusterIssuerGVK = schema.GroupVersionKind{Group: group, Version: "v1", Kind: "ClusterIssuer"}
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

// ConditionReady is the condition type of Certificates, Issuers and ClusterIssuers.
const ConditionReady = "Ready"

// DefaultClusterResourceNamespace holds ClusterIssuers' Secrets unless told otherwise, as
// cert-manager's --cluster-resource-namespace does.
const DefaultClusterResourceNamespace = "cert-manager"

// Durations of cert-manager's API (cert-manager's pkg/apis/certmanager/v1/const.go).
const (
	// DefaultDuration is a Certificate's lifetime when spec.duration is not set.
	DefaultDuration = 90 * 24 * time.Hour
	// MinimumDuration is the shortest spec.duration the webhook admits.
	MinimumDuration = time.Hour
	// MinimumRenewBefore is the shortest spec.renewBefore the webhook admits.
	MinimumRenewBefore = 5 * time.Minute
)

// issuerRef names a Certificate's issuer; an empty kind is Issuer, an empty group cert-manager.io.
type issuerRef struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Group string `json:"group,omitempty"`
}

func (r issuerRef) kind() string {
	if r.Kind == "" {
		return IssuerGVK.Kind
	}
	return r.Kind
}

func (r issuerRef) group() string {
	if r.Group == "" {
		return group
	}
	return r.Group
}

// String names the issuer as cert-manager's messages do: Kind.group/name.
func (r issuerRef) String() string { return fmt.Sprintf("%s.%s/%s", r.kind(), r.group(), r.Name) }

// certificateSpec is the part of a Certificate's spec that is honoured.
type certificateSpec struct {
	SecretName            string    `json:"secretName"`
	CommonName            string    `json:"commonName,omitempty"`
	DNSNames              []string  `json:"dnsNames,omitempty"`
	IsCA                  bool      `json:"isCA,omitempty"`
	Duration              string    `json:"duration,omitempty"`
	RenewBefore           string    `json:"renewBefore,omitempty"`
	RenewBeforePercentage *int32    `json:"renewBeforePercentage,omitempty"`
	IssuerRef             issuerRef `json:"issuerRef"`
}

// commonName is the subject's common name: spec.commonName, else the first DNS name.
func (s certificateSpec) commonName() string {
	if s.CommonName == "" && len(s.DNSNames) > 0 {
		return s.DNSNames[0]
	}
	return s.CommonName
}

// duration parses spec.duration; unset is DefaultDuration.
func (s certificateSpec) duration() (time.Duration, error) {
	if s.Duration == "" {
		return DefaultDuration, nil
	}
	return time.ParseDuration(s.Duration)
}

// renewBefore returns spec.renewBefore, zero when it is unset or not a duration.
func (s certificateSpec) renewBefore() time.Duration {
	d, _ := time.ParseDuration(s.RenewBefore)
	return d
}

// renewBeforePercentage returns spec.renewBeforePercentage, zero when it is unset.
func (s certificateSpec) renewBeforePercentage() int32 {
	if s.RenewBeforePercentage == nil {
		return 0
	}
	return *s.RenewBeforePercentage
}

// ignoredRenewal says, naming the field and the fix, why spec.renewBefore or
// spec.renewBeforePercentage cannot be honoured for a certificate that lasts duration, and what
// is done instead; nil when they can. The webhook refuses such values; a Certificate that has one
// anyway is renewed as cert-manager's controller does, two thirds into its life.
func (s certificateSpec) ignoredRenewal(duration time.Duration) error {
	instead := "the certificate is renewed two thirds into its life instead"
	percentage := s.renewBeforePercentage()
	validPercentage := percentage > 0 && percentage < 100
	if validPercentage {
		instead = fmt.Sprintf("spec.renewBeforePercentage %d is used instead", percentage)
	}
	if s.RenewBefore != "" {
		d, err := time.ParseDuration(s.RenewBefore)
		switch {
		case err != nil:
			return fmt.Errorf("spec.renewBefore %q is not a duration (use one such as 720h, or unset it): %s", s.RenewBefore, instead)
		case d <= 0 || d >= duration:
			return fmt.Errorf("spec.renewBefore %s is not between 0 and spec.duration %s (shorten spec.renewBefore, or unset it): %s", d, duration, instead)
		}
		return nil
	}
	if s.RenewBeforePercentage != nil && !validPercentage {
		return fmt.Errorf("spec.renewBeforePercentage %d is not between 0 and 100 (set 1 to 99, or unset it): %s", percentage, instead)
	}
	return nil
}

// certificateStatus is the status a Certificate is given.
type certificateStatus struct {
	Conditions  []metav1.Condition `json:"conditions,omitempty"`
	NotBefore   *metav1.Time       `json:"notBefore,omitempty"`
	NotAfter    *metav1.Time       `json:"notAfter,omitempty"`
	RenewalTime *metav1.Time       `json:"renewalTime,omitempty"`
	// Revision counts the issuances, as cert-manager's does.
	Revision *int64 `json:"revision,omitempty"`
}

// issuerSpec is the part of an Issuer's or ClusterIssuer's spec that is honoured.
type issuerSpec struct {
	SelfSigned *struct{} `json:"selfSigned,omitempty"`
	CA         *struct {
		SecretName string `json:"secretName"`
	} `json:"ca,omitempty"`
}

// issuerStatus is the status an Issuer or ClusterIssuer is given.
type issuerStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

func newObject(gvk schema.GroupVersionKind) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u
}

// readField converts u's top-level field (spec or status) into out.
func readField(u *unstructured.Unstructured, field string, out any) error {
	m, ok := u.Object[field].(map[string]any)
	if !ok {
		return nil
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, out); err != nil {
		return fmt.Errorf("failed to read %s of %s %s: %w", field, u.GetKind(), u.GetName(), err)
	}
	return nil
}

// writeField sets u's top-level field (spec or status) to what in points to.
func writeField(u *unstructured.Unstructured, field string, in any) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
	if err != nil {
		return err
	}
	u.Object[field] = m
	return nil
}
