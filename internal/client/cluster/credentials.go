package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/controllers/addons/configs"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// CAPVCredentials is the Secret CAPV's manager reads the vCenter's credentials from
// (credentials.yaml), which clusterctl fills from VSPHERE_USERNAME and VSPHERE_PASSWORD.
var CAPVCredentials = client.ObjectKey{Namespace: "capv-system", Name: "capv-manager-bootstrap-credentials"}

// Credentials are new vSphere credentials for a cluster.
type Credentials struct {
	Username, Password string
	// Management also rewrites CAPV's own credentials: the cluster is the management cluster.
	Management bool
	// Login checks the credentials against the cluster's vCenter before anything is written;
	// nil is vcenter.Login.
	Login func(ctx context.Context, ep vcenter.Endpoint) error
}

// UpdateVSphereCredentials rotates the vSphere credentials of a cluster as TKG's `credentials
// update` does: they are checked against the cluster's vCenter first, then written to CAPV's
// Secret (the management cluster's), and to the Secret the cluster's VSphereCluster names as
// its identity, from which CAPV reconciles the cluster and the addons manager renders the
// vSphere CPI's and CSI's values (their credentials Secrets on the cluster follow).
func UpdateVSphereCredentials(ctx context.Context, c client.Client, key client.ObjectKey, creds Credentials, p *progress.Printer) error {
	if creds.Username == "" || creds.Password == "" {
		return fmt.Errorf("--vsphere-user and --vsphere-password: both are needed, and neither may be empty")
	}
	cl, err := getCluster(ctx, c, key)
	if err != nil {
		return err
	}
	if kind := cl.Spec.InfrastructureRef.Kind; kind != "VSphereCluster" {
		return fmt.Errorf("cluster %s runs on %s, which has no credentials to update: only vSphere clusters have", key.Name, kind)
	}
	vc, err := configs.VSphereClusterOf(ctx, c, cl)
	if err != nil {
		return err
	}
	login := creds.Login
	if login == nil {
		login = func(ctx context.Context, ep vcenter.Endpoint) error {
			vc, err := vcenter.Login(ctx, ep)
			if err == nil {
				_ = vc.Logout(ctx)
			}
			return err
		}
	}
	if err := login(ctx, vcenter.Endpoint{Server: vc.Server, Thumbprint: vc.Thumbprint, Username: creds.Username, Password: creds.Password}); err != nil {
		return fmt.Errorf("the new credentials were refused, nothing was changed: %w", err)
	}
	if creds.Management {
		p.V(1).Infof("Updating Secret %s", CAPVCredentials)
		data, err := yaml.Marshal(map[string]string{"username": creds.Username, "password": creds.Password})
		if err != nil {
			return err
		}
		if err := patchSecret(ctx, c, CAPVCredentials, map[string][]byte{"credentials.yaml": data}); err != nil {
			return err
		}
	}
	p.V(1).Infof("Updating Secret %s/%s", key.Namespace, vc.Identity)
	return patchSecret(ctx, c, client.ObjectKey{Namespace: key.Namespace, Name: vc.Identity},
		map[string][]byte{"username": []byte(creds.Username), "password": []byte(creds.Password)})
}

// patchSecret sets keys of an existing Secret.
func patchSecret(ctx context.Context, c client.Client, key client.ObjectKey, data map[string][]byte) error {
	s := &corev1.Secret{}
	if err := c.Get(ctx, key, s); err != nil {
		return fmt.Errorf("failed to get Secret %s: %w", key, err)
	}
	before := s.DeepCopy()
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	for k, v := range data {
		s.Data[k] = v
	}
	if err := c.Patch(ctx, s, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("failed to update Secret %s: %w", key, err)
	}
	return nil
}
