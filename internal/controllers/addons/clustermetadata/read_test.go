package clustermetadata

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/slipway-dev/slipway/internal/scheme"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestManagementMetadataIsReadOncePerTTL: the passes of many workload clusters within ReadTTL
// share one read of the management cluster's two ConfigMaps; after it, they are read again.
func TestManagementMetadataIsReadOncePerTTL(t *testing.T) {
	md := &Metadata{}
	md.Cluster.Name, md.Cluster.Type, md.Cluster.TKGVersion = "mgmt", TypeManagement, "v2.5.2"
	md.BOM.ConfigMapRef.Name = BOMConfigMapPrefix + "v2.5.2"
	c := fake.NewClientBuilder().WithScheme(scheme.New()).Build()
	if _, err := Publish(t.Context(), c, md, []byte("release:\n  version: v2.5.2\n")); err != nil {
		t.Fatal(err)
	}
	reader := &countingReader{Reader: c}
	r := &Reconciler{apiReader: reader, ReadTTL: 200 * time.Millisecond}
	for range 20 {
		own, bom, err := r.managementMetadata(t.Context())
		if err != nil || own == nil || own.Cluster.TKGVersion != "v2.5.2" || string(bom) != "release:\n  version: v2.5.2\n" {
			t.Fatalf("the metadata read: %+v %q %v", own, bom, err)
		}
	}
	if reader.gets != 2 {
		t.Errorf("20 passes within the TTL made %d reads, want 2 (tkg-metadata and its BOM)", reader.gets)
	}
	time.Sleep(250 * time.Millisecond)
	if _, _, err := r.managementMetadata(t.Context()); err != nil {
		t.Fatal(err)
	}
	if reader.gets != 4 {
		t.Errorf("a pass after the TTL made %d reads in all, want 4", reader.gets)
	}

	// A management cluster without metadata is asked again at every pass: the CLI writes it
	// at any moment.
	empty := &countingReader{Reader: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "other"}}).Build()}
	r = &Reconciler{apiReader: empty, ReadTTL: time.Hour}
	for range 3 {
		if own, _, err := r.managementMetadata(t.Context()); err != nil || own != nil {
			t.Fatalf("no metadata: %+v %v", own, err)
		}
	}
	if empty.gets != 3 {
		t.Errorf("3 passes without metadata made %d reads, want 3", empty.gets)
	}
}
