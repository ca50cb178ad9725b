package config

import (
	"net"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/slipway-dev/slipway/internal/tkg"
)

// Identity management variables: how users of a management cluster are authenticated, through
// Pinniped, and its upstream provider, as TKG names them.
const (
	IdentityManagementType = "IDENTITY_MANAGEMENT_TYPE"

	OIDCProviderName  = "OIDC_IDENTITY_PROVIDER_NAME"
	OIDCIssuerURL     = "OIDC_IDENTITY_PROVIDER_ISSUER_URL"
	OIDCClientID      = "OIDC_IDENTITY_PROVIDER_CLIENT_ID"
	OIDCClientSecret  = "OIDC_IDENTITY_PROVIDER_CLIENT_SECRET"
	OIDCScopes        = "OIDC_IDENTITY_PROVIDER_SCOPES"
	OIDCUsernameClaim = "OIDC_IDENTITY_PROVIDER_USERNAME_CLAIM"
	OIDCGroupsClaim   = "OIDC_IDENTITY_PROVIDER_GROUPS_CLAIM"

	LDAPHost                      = "LDAP_HOST"
	LDAPRootCAData                = "LDAP_ROOT_CA_DATA_B64"
	LDAPBindDN                    = "LDAP_BIND_DN"
	LDAPBindPassword              = "LDAP_BIND_PASSWORD"
	LDAPUserSearchBaseDN          = "LDAP_USER_SEARCH_BASE_DN"
	LDAPUserSearchFilter          = "LDAP_USER_SEARCH_FILTER"
	LDAPUserSearchUsername        = "LDAP_USER_SEARCH_USERNAME"
	LDAPUserSearchNameAttribute   = "LDAP_USER_SEARCH_NAME_ATTRIBUTE"
	LDAPGroupSearchBaseDN         = "LDAP_GROUP_SEARCH_BASE_DN"
	LDAPGroupSearchFilter         = "LDAP_GROUP_SEARCH_FILTER"
	LDAPGroupSearchUserAttribute  = "LDAP_GROUP_SEARCH_USER_ATTRIBUTE"
	LDAPGroupSearchGroupAttribute = "LDAP_GROUP_SEARCH_GROUP_ATTRIBUTE"
	LDAPGroupSearchNameAttribute  = "LDAP_GROUP_SEARCH_NAME_ATTRIBUTE"
)

var (
	oidcVariables = []string{OIDCProviderName, OIDCIssuerURL, OIDCClientID, OIDCClientSecret, OIDCScopes, OIDCUsernameClaim, OIDCGroupsClaim}
	ldapVariables = []string{LDAPHost, LDAPRootCAData, LDAPBindDN, LDAPBindPassword, LDAPUserSearchBaseDN, LDAPUserSearchFilter,
		LDAPUserSearchUsername, LDAPUserSearchNameAttribute, LDAPGroupSearchBaseDN, LDAPGroupSearchFilter,
		LDAPGroupSearchUserAttribute, LDAPGroupSearchGroupAttribute, LDAPGroupSearchNameAttribute}
	// identityVariables are IDENTITY_MANAGEMENT_TYPE, then the variables of its providers.
	identityVariables = slices.Concat([]string{IdentityManagementType}, oidcVariables, ldapVariables)
)

// Identity is a management cluster's identity management: Pinniped's supervisor in front of an
// OIDC provider, or of an LDAP directory (through Dex, in TKG).
type Identity struct {
	// Type is oidc or ldap.
	Type string
	OIDC *OIDC
	LDAP *LDAP
}

// OIDC is the upstream OIDC provider of Pinniped's supervisor.
type OIDC struct {
	Name, IssuerURL, ClientID, ClientSecret string
	Scopes                                  []string
	UsernameClaim, GroupsClaim              string
}

// LDAP is the directory users are looked up in. RootCAData is base64-encoded PEM.
type LDAP struct {
	Host, RootCAData, BindDN, BindPassword                                     string
	UserSearchBaseDN, UserSearchFilter, UserSearchUsername, UserSearchNameAttr string
	GroupSearchBaseDN, GroupSearchFilter, GroupSearchUserAttr                  string
	GroupSearchGroupAttr, GroupSearchNameAttr                                  string
}

// identity reads IDENTITY_MANAGEMENT_TYPE and the variables of its provider, as TKG's
// configuration and installer take them: none (the default), oidc with an https issuer, a client
// ID and a secret, or ldap with a host[:port]. A workload cluster's identity is its management
// cluster's, which tanzu-auth passes on.
func (k *completer) identity() {
	if k.c.Role != Management {
		k.unusedBy("a workload cluster's identity management is its management cluster's (kube-public/pinniped-info, passed on by tanzu-auth)", identityVariables...)
		return
	}
	switch t := k.value(IdentityManagementType, "none"); t {
	case "none":
		k.unusedBy(IdentityManagementType+" is none", identityVariables[1:]...)
	case "oidc":
		k.unusedBy(IdentityManagementType+" is oidc", ldapVariables...)
		k.c.Identity = &Identity{Type: t, OIDC: k.oidc()}
	case "ldap":
		k.unusedBy(IdentityManagementType+" is ldap", oidcVariables...)
		k.c.Identity = &Identity{Type: t, LDAP: k.ldap()}
	default:
		k.bad("invalid %s %q: use none, oidc or ldap", IdentityManagementType, t)
	}
}

// required returns a variable that must be set for the identity type, or says so.
func (k *completer) required(name, why string) string {
	v, ok := k.v.Get(name)
	if !ok || strings.TrimSpace(v) == "" {
		k.bad("%s is not set but %s: set it, or set %s to none", name, why, IdentityManagementType)
	}
	return strings.TrimSpace(v)
}

func (k *completer) oidc() *OIDC {
	const why = IdentityManagementType + " is oidc"
	o := &OIDC{
		Name: k.value(OIDCProviderName, ""), IssuerURL: k.required(OIDCIssuerURL, why), ClientID: k.required(OIDCClientID, why),
		UsernameClaim: k.value(OIDCUsernameClaim, ""), GroupsClaim: k.value(OIDCGroupsClaim, ""),
	}
	if o.IssuerURL != "" {
		if u, err := url.Parse(o.IssuerURL); err != nil || u.Scheme != "https" || u.Host == "" {
			k.bad("invalid %s %q: use the provider's https URL, as https://login.example.com/oauth2", OIDCIssuerURL, o.IssuerURL)
		}
	}
	if k.required(OIDCClientSecret, why) != "" {
		o.ClientSecret = k.secret(OIDCClientSecret)
	}
	for _, s := range strings.Split(k.value(OIDCScopes, "email,profile,groups"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.Scopes = append(o.Scopes, s)
		}
	}
	return o
}

func (k *completer) ldap() *LDAP {
	l := &LDAP{
		Host: k.required(LDAPHost, IdentityManagementType+" is ldap"), BindDN: k.value(LDAPBindDN, ""),
		UserSearchBaseDN: k.value(LDAPUserSearchBaseDN, ""), UserSearchFilter: k.value(LDAPUserSearchFilter, ""),
		UserSearchUsername: k.value(LDAPUserSearchUsername, "userPrincipalName"), UserSearchNameAttr: k.value(LDAPUserSearchNameAttribute, ""),
		GroupSearchBaseDN: k.value(LDAPGroupSearchBaseDN, ""), GroupSearchFilter: k.value(LDAPGroupSearchFilter, ""),
		GroupSearchUserAttr: k.value(LDAPGroupSearchUserAttribute, "DN"), GroupSearchGroupAttr: k.value(LDAPGroupSearchGroupAttribute, ""),
		GroupSearchNameAttr: k.value(LDAPGroupSearchNameAttribute, "cn"),
	}
	if l.Host != "" {
		host := l.Host
		if h, port, err := net.SplitHostPort(l.Host); err == nil {
			host = h
			if port == "" {
				host = ""
			}
		}
		if strings.Contains(l.Host, "://") || host == "" || strings.ContainsAny(host, "/ ") {
			k.bad("invalid %s %q: use the directory's host[:port], as ldaps.example.com:636, without a scheme", LDAPHost, l.Host)
		}
	}
	l.BindPassword = k.secret(LDAPBindPassword)
	if _, ok := k.v.Get(LDAPRootCAData); ok {
		l.RootCAData = k.certificate(LDAPRootCAData)
	}
	return l
}

// PinnipedValuesName names the management cluster's pinniped values Secret, as TKG's CLI
// names it (seeds/000).
func (c *Cluster) PinnipedValuesName() string { return c.Name + "-pinniped-package" }

// PinnipedValues returns the values Secret of the management cluster's pinniped package, which
// TKG's CLI applies beside its ClusterBootstrap (seeds/000): without identity management,
// seeds/000's three lines; with it, the supervisor's upstream OIDC provider, or the LDAP
// directory behind Dex, as TKG's pinniped add-on values name them. The supervisor's endpoint
// and CA bundle are TKG's placeholders, which its post-deploy job fills in.
func (c *Cluster) PinnipedValues() *corev1.Secret {
	values := map[string]any{"infrastructure_provider": c.InfrastructureProvider, "tkg_cluster_role": "workload", "identity_management_type": "none"}
	if id := c.Identity; id != nil {
		values["tkg_cluster_role"], values["identity_management_type"] = "management", id.Type
		pinniped := map[string]any{
			"supervisor_svc_endpoint":   "https://0.0.0.0:31234",
			"supervisor_ca_bundle_data": "ca_bundle_data_of_supervisor_svc",
			"supervisor":                map[string]any{"service": map[string]any{"name": "pinniped-supervisor", "type": "NodePort"}},
		}
		switch {
		case id.OIDC != nil:
			o := id.OIDC
			pinniped["upstream_oidc_issuer_url"], pinniped["upstream_oidc_client_id"], pinniped["upstream_oidc_client_secret"] = o.IssuerURL, o.ClientID, o.ClientSecret
			pinniped["upstream_oidc_additional_scopes"] = o.Scopes
			pinniped["upstream_oidc_claims"] = map[string]any{"username": o.UsernameClaim, "groups": o.GroupsClaim}
		case id.LDAP != nil:
			l := id.LDAP
			// Pinniped's upstream is Dex, whose connector is the directory.
			pinniped["upstream_oidc_issuer_url"] = "https://0.0.0.0:30167"
			pinniped["upstream_oidc_additional_scopes"] = []string{"email", "profile", "groups"}
			pinniped["upstream_oidc_claims"] = map[string]any{"username": "name", "groups": "groups"}
			values["dex"] = map[string]any{"config": map[string]any{"connector": "ldap", "ldap": map[string]any{
				"host": l.Host, "rootCAData": l.RootCAData, "bindDN": l.BindDN, "BIND_PW_ENV_VAR": l.BindPassword,
				"userSearch": map[string]any{"baseDN": l.UserSearchBaseDN, "filter": l.UserSearchFilter, "username": l.UserSearchUsername,
					"nameAttr": l.UserSearchNameAttr},
				"groupSearch": map[string]any{"baseDN": l.GroupSearchBaseDN, "filter": l.GroupSearchFilter, "nameAttr": l.GroupSearchNameAttr,
					"userMatchers": []map[string]any{{"userAttr": l.GroupSearchUserAttr, "groupAttr": l.GroupSearchGroupAttr}}},
			}}}
		}
		values["pinniped"] = pinniped
	}
	data, err := yaml.Marshal(values)
	if err != nil {
		// Maps of strings always marshal.
		panic(err)
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: c.Namespace, Name: c.PinnipedValuesName(),
			Labels:      map[string]string{tkg.LabelAddonName: "pinniped", tkg.LabelClusterName: c.Name, "clusterctl.cluster.x-k8s.io/move": ""},
			Annotations: map[string]string{"tkg.tanzu.vmware.com/addon-type": "authentication/pinniped"},
		},
		Type:       "clusterbootstrap-secret",
		StringData: map[string]string{"values.yaml": string(data)},
	}
}
