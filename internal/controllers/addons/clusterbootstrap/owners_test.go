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
	"github.com/slipway-dev/slipway/internal/tkg"
)

// The Secrets a cloned provider names (a VSphereCPIConfig's credentials) were copied with it, and
// get their owners back once they are removed, as the provider does; a Secret the user's own
// provider names, which was never copied, is left the user's.
func TestCopiedCredentialsGetTheirOwnersBack(t *testing.T) {
	const ns, name = "default", "wl"
	cluster := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "cluster-uid"}}
	cb := &runv1alpha3.ClusterBootstrap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: "cb-uid"},
		Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{CPI: &runv1alpha3.ClusterBootstrapPackage{RefName: "vsphere-cpi.tanzu.vmware.com.1.33.0",
			ValuesFrom: &runv1alpha3.ValuesFrom{ProviderRef: &corev1.TypedLocalObjectReference{APIGroup: ptr.To(cpiv1alpha1.GroupVersion.Group),
				Kind: "VSphereCPIConfig", Name: "wl-vsphere-cpi-package"}}}}}
	cpi := &cpiv1alpha1.VSphereCPIConfig{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wl-vsphere-cpi-package"},
		Spec: cpiv1alpha1.VSphereCPIConfigSpec{VSphereCPI: cpiv1alpha1.VSphereCPI{NonParavirtualConfig: &cpiv1alpha1.NonParavirtualConfig{
			VSphereCredentialLocalObjRef: &corev1.TypedLocalObjectReference{Kind: "Secret", Name: "vc-credentials"},
			NSXT:                         &cpiv1alpha1.NSXT{CredentialLocalObjRef: &corev1.TypedLocalObjectReference{Kind: "Secret", Name: "nsxt-credentials"}}}}}}
	// Both lost their owner references, as in a restore; only the first is a copy.
	copied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "vc-credentials", Labels: map[string]string{tkg.LabelClusterName: name}}}
	users := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nsxt-credentials"}}
	s := scheme.New()
	mapper := meta.NewDefaultRESTMapper(s.PrioritizedVersionsAllGroups())
	for gvk := range s.AllKnownTypes() {
		mapper.Add(gvk, meta.RESTScopeNamespace)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithRESTMapper(mapper).WithObjects(cluster, cb, cpi, copied, users).Build()

	r := &Reconciler{Client: c}
	if err := r.reconcileOwners(t.Context(), &scope{cluster: cluster, cb: cb}); err != nil {
		t.Fatal(err)
	}
	owners := func(o client.Object) []string {
		if err := c.Get(t.Context(), client.ObjectKeyFromObject(o), o); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ref := range o.GetOwnerReferences() {
			out = append(out, ref.Kind+"/"+ref.Name)
		}
		return out
	}
	want := "[Cluster/wl ClusterBootstrap/wl]"
	if got := owners(cpi); fmt.Sprint(got) != want {
		t.Errorf("the cloned VSphereCPIConfig's owners: %v, want %s", got, want)
	}
	if got := owners(copied); fmt.Sprint(got) != want {
		t.Errorf("the copied credentials' owners: %v, want %s", got, want)
	}
	if got := owners(users); len(got) != 0 {
		t.Errorf("the user's own Secret was given owners %v: it would go with the cluster", got)
	}
}
