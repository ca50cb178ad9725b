package clusterbootstrap

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	cpiv1alpha1 "github.com/slipway-dev/slipway/api/cpi/v1alpha1"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// The Secrets a cloned provider names (a VSphereCPIConfig's credentials) were copied with it from
// the release's template, and get their owners back once they are removed, as the provider does;
// a Secret of such a name that holds other data is the user's (or was edited) and is left alone,
// since owning it would delete it with the cluster. The fake client stands for the API server:
// the envtest suite's template names no credentials.
func TestCopiedCredentialsGetTheirOwnersBack(t *testing.T) {
	const sys, ns, name, release = "tkg-system", "default", "wl", "v1.35.4---vmware.1-tkg.1"
	cpiRef := func(name string) *runv1alpha3.ValuesFrom {
		return &runv1alpha3.ValuesFrom{ProviderRef: &corev1.TypedLocalObjectReference{APIGroup: ptr.To(cpiv1alpha1.GroupVersion.Group), Kind: "VSphereCPIConfig", Name: name}}
	}
	cpi := func(namespace, name string) *cpiv1alpha1.VSphereCPIConfig {
		return &cpiv1alpha1.VSphereCPIConfig{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: cpiv1alpha1.VSphereCPIConfigSpec{VSphereCPI: cpiv1alpha1.VSphereCPI{NonParavirtualConfig: &cpiv1alpha1.NonParavirtualConfig{
				VSphereCredentialLocalObjRef: &corev1.TypedLocalObjectReference{Kind: "Secret", Name: "vc-credentials"},
				NSXT:                         &cpiv1alpha1.NSXT{CredentialLocalObjRef: &corev1.TypedLocalObjectReference{Kind: "Secret", Name: "nsxt-credentials"}}}}}}
	}
	secret := func(namespace, name, password string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string][]byte{"password": []byte(password)}}
	}
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "cluster-uid"}}
	cb := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "cb-uid"},
		Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{CPI: &runv1alpha3.ClusterBootstrapPackage{RefName: "vsphere-cpi.tanzu.vmware.com.1.33.0", ValuesFrom: cpiRef("wl-vsphere-cpi-package")}}}
	template := &runv1alpha3.ClusterBootstrapTemplate{ObjectMeta: metav1.ObjectMeta{Namespace: sys, Name: release},
		Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{CPI: &runv1alpha3.ClusterBootstrapPackage{RefName: "vsphere-cpi.tanzu.vmware.com.1.33.0", ValuesFrom: cpiRef("template-cpi")}}}
	// The clone and the copy lost their owner references, as in a restore; the user's
	// nsxt-credentials in the cluster's namespace was never a copy: it holds other data.
	clone, copied, users := cpi(ns, "wl-vsphere-cpi-package"), secret(ns, "vc-credentials", "s3cret"), secret(ns, "nsxt-credentials", "mine")
	s := scheme.New()
	mapper := meta.NewDefaultRESTMapper(s.PrioritizedVersionsAllGroups())
	for gvk := range s.AllKnownTypes() {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).WithObjects(cluster, cb, template, cpi(sys, "template-cpi"),
		secret(sys, "vc-credentials", "s3cret"), secret(sys, "nsxt-credentials", "template's"), clone, copied, users).Build()

	r := &Reconciler{Client: c, SystemNamespace: sys}
	if err := r.reconcileOwners(t.Context(), &scope{cluster: cluster, cb: cb, tkrName: release}); err != nil {
		t.Fatal(err)
	}
	owners := func(o client.Object) string {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ref := range o.GetOwnerReferences() {
			out = append(out, ref.Kind+"/"+ref.Name)
		}
		return fmt.Sprint(out)
	}
	const want = "[Cluster/wl ClusterBootstrap/wl]"
	if got := owners(clone); got != want {
		t.Errorf("the cloned VSphereCPIConfig's owners: %s, want %s", got, want)
	}
	if got := owners(copied); got != want {
		t.Errorf("the copied credentials' owners: %s, want %s", got, want)
	}
	if got := owners(users); got != "[]" {
		t.Errorf("the user's own Secret was given owners %s: it would go with the cluster", got)
	}
}
