package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// credentialsClient serves vSphere cluster vc (identity Secret vc-identity), local cluster lc and
// CAPV's credentials.
func credentialsClient(t *testing.T) client.Client {
	t.Helper()
	vsphereGVK := schema.GroupVersionKind{Group: "infrastructure.cluster.x-k8s.io", Version: "v1beta1", Kind: "VSphereCluster"}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{vsphereGVK.GroupVersion()})
	mapper.Add(vsphereGVK, meta.RESTScopeNamespace)
	vsc := &unstructured.Unstructured{}
	vsc.SetGroupVersionKind(vsphereGVK)
	vsc.SetNamespace("default")
	vsc.SetName("vc")
	_ = unstructured.SetNestedMap(vsc.Object, map[string]any{"server": "vc.example.com", "thumbprint": "AA:BB",
		"identityRef": map[string]any{"kind": "Secret", "name": "vc-identity"}}, "spec")
	vc := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "vc"}}
	vc.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: vsphereGVK.Group, Kind: vsphereGVK.Kind, Name: "vc"}
	lc := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "lc"}}
	lc.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{APIGroup: vsphereGVK.Group, Kind: "LocalCluster", Name: "lc"}
	return fake.NewClientBuilder().WithScheme(scheme.New()).WithRESTMapper(mapper).WithObjects(vc, lc, vsc,
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "vc-identity"}, Data: map[string][]byte{"username": []byte("old"), "password": []byte("old")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: CAPVCredentials.Namespace, Name: CAPVCredentials.Name}, Data: map[string][]byte{"credentials.yaml": []byte("username: old\npassword: old\n")}},
	).Build()
}

func TestUpdateVSphereCredentials(t *testing.T) {
	ctx := t.Context()
	p := progress.ForWriter(&strings.Builder{})
	key := client.ObjectKey{Namespace: "default", Name: "vc"}
	secret := func(c client.Client, key client.ObjectKey) map[string][]byte {
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err != nil {
			t.Fatal(err)
		}
		return s.Data
	}

	// Refused by the vCenter: nothing is written.
	c := credentialsClient(t)
	var asked vcenter.Endpoint
	refuse := func(_ context.Context, ep vcenter.Endpoint) error {
		asked = ep
		return errors.New("cannot complete login due to an incorrect user name or password")
	}
	err := UpdateVSphereCredentials(ctx, c, key, Credentials{Username: "new", Password: "wrong", Management: true, Login: refuse}, p)
	if err == nil || !strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), "incorrect user name") {
		t.Errorf("refused credentials: %v", err)
	}
	if asked.Server != "vc.example.com" || asked.Thumbprint != "AA:BB" || asked.Username != "new" {
		t.Errorf("the login asked %+v, want the VSphereCluster's server and thumbprint", asked)
	}
	if got := secret(c, client.ObjectKey{Namespace: "default", Name: "vc-identity"}); string(got["password"]) != "old" {
		t.Errorf("a refused password was written: %q", got["password"])
	}

	// Accepted: the identity Secret and, for a management cluster, CAPV's.
	accept := func(context.Context, vcenter.Endpoint) error { return nil }
	if err := UpdateVSphereCredentials(ctx, c, key, Credentials{Username: "new", Password: "s3cret", Management: true, Login: accept}, p); err != nil {
		t.Fatal(err)
	}
	if got := secret(c, client.ObjectKey{Namespace: "default", Name: "vc-identity"}); string(got["username"]) != "new" || string(got["password"]) != "s3cret" {
		t.Errorf("the identity Secret: %q", got)
	}
	username, password, err := vcenter.ParseCAPVCredentials(secret(c, CAPVCredentials)["credentials.yaml"])
	if err != nil || username != "new" || password != "s3cret" {
		t.Errorf("CAPV's credentials: %q %q %v", username, password, err)
	}

	// A local cluster has none; empty values are refused by flag.
	if err := UpdateVSphereCredentials(ctx, c, client.ObjectKey{Namespace: "default", Name: "lc"}, Credentials{Username: "a", Password: "b", Login: accept}, p); err == nil ||
		!strings.Contains(err.Error(), "runs on LocalCluster") {
		t.Errorf("a local cluster: %v", err)
	}
	if err := UpdateVSphereCredentials(ctx, c, key, Credentials{Username: "a", Login: accept}, p); err == nil || !strings.Contains(err.Error(), "--vsphere-password") {
		t.Errorf("no password: %v", err)
	}
}
