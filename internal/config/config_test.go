package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slipway-dev/slipway/internal/tkg"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var defaults = Defaults{KubernetesVersion: "v1.35.4", Now: time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)}

func TestDefaultsAreSaidAsTKGSaysThem(t *testing.T) {
	var said []string
	c, err := Complete(NewVariables(), Management, defaults, func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "tkg-mgmt-local-20261124180000" || c.Namespace != tkg.SystemNamespace || c.Plan != "dev" ||
		c.ControlPlaneMachineCount != 1 || c.WorkerMachineCount != 1 || c.CNI != "antrea" || c.KubernetesVersion != "v1.35.4" {
		t.Errorf("defaults: %+v", c)
	}
	want := "Using default value for CONTROL_PLANE_MACHINE_COUNT = 1. Reason: CONTROL_PLANE_MACHINE_COUNT variable is not set"
	if !strings.Contains(strings.Join(said, "\n"), want) {
		t.Errorf("the defaults said %q, want a line %q", said, want)
	}
	prod, err := Complete(mustRead(t, "CLUSTER_NAME: pp\nCLUSTER_PLAN: prod\n", nil), Workload, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if prod.ControlPlaneMachineCount != 3 || prod.WorkerMachineCount != 3 || prod.Namespace != "default" {
		t.Errorf("prod defaults: %+v", prod)
	}
}

func mustRead(t *testing.T, content string, environ []string) *Variables {
	t.Helper()
	v, err := Read(writeFile(t, content), environ)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestFlagsOverrideEnvironmentOverrideFile(t *testing.T) {
	v := mustRead(t, "CLUSTER_NAME: from-file\nWORKER_MACHINE_COUNT: 2\nCNI: antrea\nMY_OWN: x\n",
		[]string{"WORKER_MACHINE_COUNT=3", "CNI=calico", "PATH=/bin"})
	v.Set(CNI, "none")
	c, err := Complete(v, Workload, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "from-file" || c.WorkerMachineCount != 3 || c.CNI != "none" {
		t.Errorf("precedence: %+v", c)
	}
	if got := v.Unknown(); len(got) != 1 || got[0] != "MY_OWN" {
		t.Errorf("unknown variables %v, want [MY_OWN] (PATH comes from the environment and is not read)", got)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	for _, tc := range []struct {
		file string
		role Role
		want string
	}{
		{"CLUSTER_NAME: Bad_Name", Workload, `invalid CLUSTER_NAME "Bad_Name": cluster name doesn't match regex`},
		{"CLUSTER_NAME: a-name-far-too-long-for-a-local-cluster-of-slipway", Workload, `invalid CLUSTER_NAME "a-name-far-too-long-for-a-local-cluster-of-slipway" for the local infrastructure provider`},
		{"CLUSTER_NAME: ok\nCLUSTER_PLAN: big", Workload, `invalid CLUSTER_PLAN "big": use dev or prod`},
		{"CLUSTER_NAME: ok\nINFRASTRUCTURE_PROVIDER: aws", Workload, `invalid INFRASTRUCTURE_PROVIDER "aws": use local or vsphere`},
		{"CLUSTER_NAME: ok\nCONTROL_PLANE_MACHINE_COUNT: 2", Workload, "invalid CONTROL_PLANE_MACHINE_COUNT 2: the control plane needs an odd number"},
		{"CLUSTER_NAME: ok\nCONTROL_PLANE_MACHINE_COUNT: two", Workload, `invalid CONTROL_PLANE_MACHINE_COUNT "two": use a whole number of at least 1`},
		{"CLUSTER_NAME: ok\nWORKER_MACHINE_COUNT: 0", Management, "invalid WORKER_MACHINE_COUNT 0: a management cluster needs at least one worker"},
		{"CLUSTER_NAME: ok\nCNI: calico", Management, `invalid CNI "calico": a management cluster runs antrea`},
		{"CLUSTER_NAME: ok\nCNI: flannel", Workload, `invalid CNI "flannel": use antrea, calico or none`},
		{"CLUSTER_NAME: ok\nCLUSTER_CIDR: 100.96.0.0/33", Workload, `invalid CLUSTER_CIDR "100.96.0.0/33", expected to be a CIDR of type "ipv4" (TKG_IP_FAMILY)`},
		{"CLUSTER_NAME: ok\nSERVICE_CIDR: 10.0.0.0/8", Workload, `invalid SERVICE_CIDR "10.0.0.0/8", expected netmask to be "/12" or greater`},
		{"CLUSTER_NAME: ok\nCLUSTER_CIDR: 100.64.0.0/11", Workload, `CLUSTER_CIDR "100.64.0.0/11" and SERVICE_CIDR "100.64.0.0/13" overlap`},
		{"CLUSTER_NAME: ok\nKUBERNETES_VERSION: 1.35.4", Workload, `invalid KUBERNETES_VERSION "1.35.4": a Kubernetes version starts with v`},
		{"CLUSTER_NAME: ok\nNAMESPACE: other", Management, `invalid NAMESPACE "other": a management cluster's objects live in tkg-system`},
		{"CLUSTER_NAME: ok\nLOCAL_NODE_RUNTIME: agent", Workload, `invalid LOCAL_NODE_RUNTIME "agent": the node agent is retired and every node of the local runtime is real: remove LOCAL_NODE_RUNTIME`},
	} {
		_, err := Complete(mustRead(t, tc.file, nil), tc.role, defaults, func(string, ...any) {})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want an error containing %q", tc.file, err, tc.want)
		}
	}
}

// TestBadNumberRefusedOnce: a count that is no number is refused for what it is, not again by
// the rules that read the count.
func TestBadNumberRefusedOnce(t *testing.T) {
	_, err := Complete(mustRead(t, "CLUSTER_NAME: ok\nWORKER_MACHINE_COUNT: three\n", nil), Management, defaults, func(string, ...any) {})
	if err == nil || strings.Count(err.Error(), "WORKER_MACHINE_COUNT") != 1 || !strings.Contains(err.Error(), `invalid WORKER_MACHINE_COUNT "three": use a whole number`) {
		t.Errorf("got %v, want one refusal of WORKER_MACHINE_COUNT", err)
	}
}

func TestFilesThatAreNotFlatAreRefused(t *testing.T) {
	for content, want := range map[string]string{
		"apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\n": "it is a Kubernetes object (kind Cluster)",
		"CLUSTER_NAME:\n  nested: true\n":                       "CLUSTER_NAME has a nested value",
		"[not, a, map]":                                         "not a flat YAML file",
	} {
		if _, err := Read(writeFile(t, content), nil); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want %q", content, err, want)
		}
	}
	if _, err := Read(filepath.Join(t.TempDir(), "missing.yaml"), nil); err == nil || !strings.Contains(err.Error(), "failed to read the configuration file") {
		t.Errorf("a missing file: %v", err)
	}
}

func TestObjectIsTheClusterClassCluster(t *testing.T) {
	c, err := Complete(mustRead(t, "CLUSTER_NAME: mgmt\nWORKER_MACHINE_COUNT: 2\n", nil), Management, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	o := c.Object()
	if o.Namespace != "tkg-system" || o.Spec.Topology.ClassRef.Name != "tkg-local-default-v1.0.0" || *o.Spec.Topology.Workers.MachineDeployments[0].Replicas != 2 ||
		o.Spec.ClusterNetwork.Pods.CIDRBlocks[0] != "100.96.0.0/11" || o.Spec.Topology.Version != "v1.35.4" {
		t.Errorf("cluster: %+v", o.Spec)
	}
	if _, ok := o.Labels[tkg.LabelManagementCluster]; !ok || o.Annotations[tkg.AnnotationPlan] != "dev" {
		t.Errorf("labels %v, annotations %v", o.Labels, o.Annotations)
	}
	cb := c.ClusterBootstrap("v1.35.4---vmware.1-tkg.1")
	if cb.Annotations["tkg.tanzu.vmware.com/add-missing-fields-from-tkr"] != "v1.35.4---vmware.1-tkg.1" || cb.Spec.Kapp.RefName != "kapp-controller*" {
		t.Errorf("ClusterBootstrap %+v", cb)
	}
}

// TestRetiredNodeRuntime: LOCAL_NODE_RUNTIME, which chose the node agent's nodes before the
// agent retired, is "real" or refused; "real" is said to change nothing, and the Cluster carries
// no node-runtime annotation.
func TestRetiredNodeRuntime(t *testing.T) {
	for _, role := range []Role{Workload, Management} {
		var notes []string
		c, err := Complete(mustRead(t, "CLUSTER_NAME: cl\nLOCAL_NODE_RUNTIME: real\n", nil), role, defaults, func(format string, args ...any) { notes = append(notes, fmt.Sprintf(format, args...)) })
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.Object().Annotations["local.infrastructure.cluster.x-k8s.io/node-runtime"]; ok {
			t.Errorf("%s: the Cluster has the node-runtime annotation", role)
		}
		if !slices.Contains(append(notes, c.Notes...), "LOCAL_NODE_RUNTIME is no longer read: every node of the local runtime is real") {
			t.Errorf("%s: nothing says LOCAL_NODE_RUNTIME is no longer read: %q %q", role, notes, c.Notes)
		}
	}
}

// TestPrecedenceOfEveryFamily checks flags > environment > file > defaults for the proxy, size,
// health check and vSphere variables, and that the environment reads only known variables.
func TestPrecedenceOfEveryFamily(t *testing.T) {
	file := vsphere(WorkerSize, "medium", EnableMHC, "true", HTTPProxyEnabled, "false", VSpherePassword, "from-file", VSphereDatacenter, "/file-dc")
	v := mustRead(t, file, []string{"WORKER_SIZE=large", "ENABLE_MHC=false", "VSPHERE_PASSWORD=<encoded:ZnJvbS1lbnY=>", "VSPHERE_DATACENTER=/env-dc",
		"TKG_HTTP_PROXY_ENABLED=true", "TKG_HTTP_PROXY=http://env-proxy:3128", "TKG_HTTPS_PROXY=http://env-proxy:3128", "TKG_NO_PROXY=vcenter.example.com"})
	v.Set(VSphereDatacenter, "/flag-dc")
	v.Set(HTTPSProxy, "http://flag-proxy:3129")
	c, err := Complete(v, Workload, defaults, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if c.WorkerMachine != nodeSizes["large"] || c.HealthChecks.Workers || c.VSphere.Password != "from-env" || c.VSphere.Datacenter != "/flag-dc" ||
		c.Proxy == nil || c.Proxy.HTTPProxy != "http://env-proxy:3128" || c.Proxy.HTTPSProxy != "http://flag-proxy:3129" {
		t.Errorf("precedence: %+v (vSphere %+v, proxy %+v)", c, c.VSphere, c.Proxy)
	}
	// The defaults are the last word: what nothing sets.
	if c.ControlPlaneMachine != (Machine{NumCPUs: 2, MemoryMiB: 8192, DiskGiB: 40}) || c.HealthChecks.FalseStatusTimeout != 12*time.Minute {
		t.Errorf("defaults: %+v", c)
	}
}

// TestMarshalEncodesThePassword checks the saved configuration never holds the vCenter password
// or the identity provider's secrets in clear, as TKG saves them, and reads back the same.
func TestMarshalEncodesThePassword(t *testing.T) {
	v := mustRead(t, vsphere(VSpherePassword, "Admin!23"), nil)
	data, err := v.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "Admin!23") || !strings.Contains(string(data), "VSPHERE_PASSWORD: <encoded:QWRtaW4hMjM=>") {
		t.Errorf("saved:\n%s", data)
	}
	c, err := Complete(mustRead(t, string(data), nil), Workload, defaults, func(string, ...any) {})
	if err != nil || c.VSphere.Password != "Admin!23" {
		t.Errorf("read back: %v, %+v", err, c)
	}

	// The identity provider's secrets too.
	v = mustRead(t, local(IdentityManagementType, "oidc", OIDCIssuerURL, "https://login.example.com", OIDCClientID, "id", OIDCClientSecret, "s3cret",
		LDAPBindPassword, "b1nd"), nil)
	if data, err = v.Marshal(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cret") || strings.Contains(string(data), "b1nd") ||
		!strings.Contains(string(data), "OIDC_IDENTITY_PROVIDER_CLIENT_SECRET: <encoded:czNjcmV0>") || !strings.Contains(string(data), "LDAP_BIND_PASSWORD: <encoded:YjFuZA==>") {
		t.Errorf("saved:\n%s", data)
	}
	if c, err = Complete(mustRead(t, string(data), nil), Management, defaults, func(string, ...any) {}); err != nil || c.Identity.OIDC.ClientSecret != "s3cret" {
		t.Errorf("read back: %v, %+v", err, c)
	}
}

// TestOSImageSelector checks the upgrade's --os-* flags against the releases' vSphere images.
func TestOSImageSelector(t *testing.T) {
	if got, err := OSImageSelector("photon", "", ""); err != nil || got != "image-type=ova,os-name=photon" {
		t.Errorf("photon: %q, %v", got, err)
	}
	for _, tc := range []struct{ name, version, arch, want string }{
		{"windows95", "", "", `invalid --os-name "windows95": use ubuntu or photon`},
		{"ubuntu", "22.04", "", `invalid --os-version "22.04" for --os-name ubuntu: use 20.04`},
		{"ubuntu", "20.04", "arm64", `invalid --os-arch "arm64": use amd64`},
	} {
		if _, err := OSImageSelector(tc.name, tc.version, tc.arch); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc, err, tc.want)
		}
	}
}

// TestNotKnown checks the warning of a variable slipway does not read: the nearest known name
// is offered for a misspelling within two letters, none for a name far from every one.
func TestNotKnown(t *testing.T) {
	for name, want := range map[string]string{
		"WORKER_MACHINE_CONUT": "WORKER_MACHINE_CONUT is not a configuration variable slipway knows (did you mean WORKER_MACHINE_COUNT?)",
		"cluster_plan":         "cluster_plan is not a configuration variable slipway knows (did you mean CLUSTER_PLAN?)",
		"VSPHERE_SEVER":        "VSPHERE_SEVER is not a configuration variable slipway knows (did you mean VSPHERE_SERVER?)",
		"MY_OWN_SETTING":       "MY_OWN_SETTING is not a configuration variable slipway knows",
	} {
		if got := NotKnown(name); got != want {
			t.Errorf("NotKnown(%q) = %q, want %q", name, got, want)
		}
	}
}
