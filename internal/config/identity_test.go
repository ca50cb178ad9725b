package config

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestPinnipedValues checks the management cluster's pinniped values Secret, which its
// ClusterBootstrap names: seeds/000's three lines without identity management, the upstream
// provider with it.
func TestPinnipedValues(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       map[string]any
		pinniped   map[string]any
	}{
		{"none", local(), map[string]any{"identity_management_type": "none", "tkg_cluster_role": "workload", "infrastructure_provider": "local"}, nil},
		{"oidc", local(IdentityManagementType, "oidc", OIDCIssuerURL, "https://login.example.com", OIDCClientID, "id", OIDCClientSecret, "s",
			OIDCGroupsClaim, "groups"),
			map[string]any{"identity_management_type": "oidc", "tkg_cluster_role": "management"},
			map[string]any{"upstream_oidc_issuer_url": "https://login.example.com", "upstream_oidc_client_id": "id", "upstream_oidc_client_secret": "s"}},
		{"ldap", local(IdentityManagementType, "ldap", LDAPHost, "ldap.example.com:636"),
			map[string]any{"identity_management_type": "ldap", "tkg_cluster_role": "management"},
			map[string]any{"upstream_oidc_issuer_url": "https://0.0.0.0:30167"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := complete(t, tc.file, Management)
			if err != nil {
				t.Fatal(err)
			}
			s := c.PinnipedValues()
			if s.Name != "wc-pinniped-package" || s.Type != "clusterbootstrap-secret" ||
				s.Labels["tkg.tanzu.vmware.com/addon-name"] != "pinniped" {
				t.Errorf("Secret %s, type %s, labels %v", s.Name, s.Type, s.Labels)
			}
			values := map[string]any{}
			if err := yaml.Unmarshal([]byte(s.StringData["values.yaml"]), &values); err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if values[k] != v {
					t.Errorf("%s: %v, want %v\n%s", k, values[k], v, s.StringData["values.yaml"])
				}
			}
			pinniped, _ := values["pinniped"].(map[string]any)
			for k, v := range tc.pinniped {
				if pinniped[k] != v {
					t.Errorf("pinniped.%s: %v, want %v", k, pinniped[k], v)
				}
			}
			if tc.name == "ldap" && !strings.Contains(s.StringData["values.yaml"], "host: ldap.example.com:636") {
				t.Errorf("Dex's LDAP connector lacks the host:\n%s", s.StringData["values.yaml"])
			}
			cb := c.ClusterBootstrap("v1.35.4---vmware.1-tkg.1")
			named := false
			for _, p := range cb.Spec.AdditionalPackages {
				named = named || p.RefName == "pinniped*" && p.ValuesFrom != nil && p.ValuesFrom.SecretRef == s.Name
			}
			if !named {
				t.Errorf("the ClusterBootstrap does not name %s for pinniped: %+v", s.Name, cb.Spec.AdditionalPackages)
			}
		})
	}
}
