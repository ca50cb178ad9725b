package fetch_test

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/carvel/fetch"
	"github.com/slipway-dev/slipway/internal/registrytrust"
	"github.com/slipway-dev/slipway/internal/test/testregistry"
)

// TestConfigTrustReachesARegistryOfItsOwnCA fetches an image from a registry whose CA the system
// does not trust, as kapp-controller does with its kapp-controller-config Secret: refused without
// the Secret, fetched once the Secret's caCerts names the CA, refused again when the Secret no
// longer does; a ConfigMap's caCerts (tkr-controller-config) and an unverified host do the same.
func TestConfigTrustReachesARegistryOfItsOwnCA(t *testing.T) {
	host, ca, push := testregistry.StartTLS(t)
	ref, err := name.ParseReference(host + "/packages/bundle:v1")
	if err != nil {
		t.Fatal(err)
	}
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img, remote.WithTransport(push)); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().Build()
	key := client.ObjectKey{Namespace: "tkg-system", Name: fetch.KappControllerConfig}
	trust := &fetch.ConfigTrust{Client: c, Key: key, Secret: true}
	fetchImage := func() error {
		transport, err := trust.Transport(t.Context())
		if err != nil {
			return err
		}
		step := kappctrlv1alpha1.AppFetch{Image: &kappctrlv1alpha1.AppFetchImage{URL: ref.String()}}
		return fetch.Fetch(t.Context(), c, "default", []kappctrlv1alpha1.AppFetch{step}, t.TempDir(), transport)
	}
	if err := fetchImage(); !registrytrust.Untrusted(err) {
		t.Errorf("without kapp-controller-config: %v, want an untrusted certificate", err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: map[string][]byte{"caCerts": []byte(ca)}}
	if err := c.Create(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	if err := fetchImage(); err != nil {
		t.Errorf("with the CA in kapp-controller-config: %v", err)
	}
	secret.Data = map[string][]byte{"caCerts": nil}
	if err := c.Update(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	if err := fetchImage(); !registrytrust.Untrusted(err) {
		t.Errorf("with the CA taken out of kapp-controller-config: %v, want an untrusted certificate", err)
	}
	secret.Data = map[string][]byte{"dangerousSkipTLSVerify": []byte("other.example.com," + host)}
	if err := c.Update(t.Context(), secret); err != nil {
		t.Fatal(err)
	}
	if err := fetchImage(); err != nil {
		t.Errorf("with %s in dangerousSkipTLSVerify: %v", host, err)
	}
	// A flag's unverified host holds without the configuration object.
	flagged := &fetch.ConfigTrust{Client: c, Key: client.ObjectKey{Namespace: "tkg-system", Name: "absent"}, SkipVerify: []string{host}}
	if transport, err := flagged.Transport(t.Context()); err != nil {
		t.Fatal(err)
	} else if _, err := fetch.ImageFiles(t.Context(), ref.String(), fetch.Registry{Transport: transport}); err != nil {
		t.Errorf("with %s unverified by a flag and no configuration object: %v", host, err)
	}
	cmKey := client.ObjectKey{Namespace: "tkg-system", Name: fetch.TKRControllerConfig}
	if err := c.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: cmKey.Namespace, Name: cmKey.Name},
		Data: map[string]string{"caCerts": ca}}); err != nil {
		t.Fatal(err)
	}
	tkr := &fetch.ConfigTrust{Client: c, Key: cmKey}
	transport, err := tkr.Transport(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fetch.ImageFiles(t.Context(), ref.String(), fetch.Registry{Transport: transport}); err != nil {
		t.Errorf("with the CA in tkr-controller-config: %v", err)
	}
}
