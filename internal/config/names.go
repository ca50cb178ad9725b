package config

import (
	"slices"
	"strings"
)

// The variables slipway reads, by TKG's names.
const (
	ClusterName              = "CLUSTER_NAME"
	ClusterPlan              = "CLUSTER_PLAN"
	InfrastructureProvider   = "INFRASTRUCTURE_PROVIDER"
	Namespace                = "NAMESPACE"
	ControlPlaneMachineCount = "CONTROL_PLANE_MACHINE_COUNT"
	WorkerMachineCount       = "WORKER_MACHINE_COUNT"
	// WorkerMachineCount0, 1 and 2 give each machine deployment of the prod plan its workers
	// (all three together); WorkerMachineCount0 alone gives md-0's on the dev plan.
	WorkerMachineCount0 = "WORKER_MACHINE_COUNT_0"
	WorkerMachineCount1 = "WORKER_MACHINE_COUNT_1"
	WorkerMachineCount2 = "WORKER_MACHINE_COUNT_2"
	CNI                 = "CNI"
	ClusterCIDR         = "CLUSTER_CIDR"
	ServiceCIDR         = "SERVICE_CIDR"
	IPFamily            = "TKG_IP_FAMILY"
	KubernetesVersion   = "KUBERNETES_VERSION"
	OSName              = "OS_NAME"
	OSVersion           = "OS_VERSION"
	OSArch              = "OS_ARCH"
	// CustomImageRepository is a registry path holding a copy of every image and bundle, where
	// the package repository and the TKR catalogue are read.
	CustomImageRepository = "TKG_CUSTOM_IMAGE_REPOSITORY"
	// ClusterAPIServerPort is the port of the cluster's API server endpoint.
	ClusterAPIServerPort = "CLUSTER_API_SERVER_PORT"
	// ControlPlaneNodeLabels are labels of the control-plane nodes, "key1=value1,key2=value2".
	ControlPlaneNodeLabels = "CONTROL_PLANE_NODE_LABELS"
	// LocalNodeRuntime was slipway's, not TKG's: what the local provider's nodes were, "real" or
	// the retired node agent's "agent". Every node is real now; "real" is still read, without
	// effect.
	LocalNodeRuntime = "LOCAL_NODE_RUNTIME"
)

// Proxy variables.
const (
	HTTPProxyEnabled = "TKG_HTTP_PROXY_ENABLED"
	HTTPProxy        = "TKG_HTTP_PROXY"
	HTTPSProxy       = "TKG_HTTPS_PROXY"
	NoProxy          = "TKG_NO_PROXY"
)

// Machine health check variables.
const (
	EnableMHC                   = "ENABLE_MHC"
	EnableMHCControlPlane       = "ENABLE_MHC_CONTROL_PLANE"
	EnableMHCWorkerNode         = "ENABLE_MHC_WORKER_NODE"
	MHCUnknownStatusTimeout     = "MHC_UNKNOWN_STATUS_TIMEOUT"
	MHCFalseStatusTimeout       = "MHC_FALSE_STATUS_TIMEOUT"
	MHCMaxUnhealthyControlPlane = "MHC_MAX_UNHEALTHY_CONTROL_PLANE"
	MHCMaxUnhealthyWorkerNode   = "MHC_MAX_UNHEALTHY_WORKER_NODE"
	NodeStartupTimeout          = "NODE_STARTUP_TIMEOUT"
)

// Node size variables: a size name (small, medium, large, extra-large) for every node, for the
// control plane's or for the workers'.
const (
	Size             = "SIZE"
	ControlPlaneSize = "CONTROLPLANE_SIZE"
	WorkerSize       = "WORKER_SIZE"
)

// vSphere variables.
const (
	VSphereServer               = "VSPHERE_SERVER"
	VSphereUsername             = "VSPHERE_USERNAME"
	VSpherePassword             = "VSPHERE_PASSWORD"
	VSphereDatacenter           = "VSPHERE_DATACENTER"
	VSphereDatastore            = "VSPHERE_DATASTORE"
	VSphereStoragePolicyID      = "VSPHERE_STORAGE_POLICY_ID"
	VSphereNetwork              = "VSPHERE_NETWORK"
	VSphereResourcePool         = "VSPHERE_RESOURCE_POOL"
	VSphereFolder               = "VSPHERE_FOLDER"
	VSphereSSHAuthorizedKey     = "VSPHERE_SSH_AUTHORIZED_KEY"
	VSphereTLSThumbprint        = "VSPHERE_TLS_THUMBPRINT"
	VSphereInsecure             = "VSPHERE_INSECURE"
	VSphereCloneMode            = "VSPHERE_CLONE_MODE"
	VSphereControlPlaneEndpoint = "VSPHERE_CONTROL_PLANE_ENDPOINT"
	// DeployTKGOnVSphere7 answers TKG's vSphere 7 question (--deploy-tkg-on-vSphere7):
	// slipway never asks, and prints TKG's paragraph.
	DeployTKGOnVSphere7 = "DEPLOY_TKG_ON_VSPHERE7"

	VSphereNumCPUs             = "VSPHERE_NUM_CPUS"
	VSphereMemMiB              = "VSPHERE_MEM_MIB"
	VSphereDiskGiB             = "VSPHERE_DISK_GIB"
	VSphereControlPlaneNumCPUs = "VSPHERE_CONTROL_PLANE_NUM_CPUS"
	VSphereControlPlaneMemMiB  = "VSPHERE_CONTROL_PLANE_MEM_MIB"
	VSphereControlPlaneDiskGiB = "VSPHERE_CONTROL_PLANE_DISK_GIB"
	VSphereWorkerNumCPUs       = "VSPHERE_WORKER_NUM_CPUS"
	VSphereWorkerMemMiB        = "VSPHERE_WORKER_MEM_MIB"
	VSphereWorkerDiskGiB       = "VSPHERE_WORKER_DISK_GIB"
)

// knownVariables are the variables above: the environment overrides only these, and any other
// variable of a file is reported as unknown.
var knownVariables = append([]string{
	ClusterName, ClusterPlan, InfrastructureProvider, Namespace, ControlPlaneMachineCount, WorkerMachineCount,
	WorkerMachineCount0, WorkerMachineCount1, WorkerMachineCount2, CNI, ClusterCIDR, ServiceCIDR, IPFamily,
	KubernetesVersion, OSName, OSVersion, OSArch, CustomImageRepository, ClusterAPIServerPort, ControlPlaneNodeLabels, LocalNodeRuntime,
	HTTPProxyEnabled, HTTPProxy, HTTPSProxy, NoProxy,
	EnableMHC, EnableMHCControlPlane, EnableMHCWorkerNode, MHCUnknownStatusTimeout, MHCFalseStatusTimeout,
	MHCMaxUnhealthyControlPlane, MHCMaxUnhealthyWorkerNode, NodeStartupTimeout,
	Size, ControlPlaneSize, WorkerSize,
	VSphereServer, VSphereUsername, VSpherePassword, VSphereDatacenter, VSphereDatastore, VSphereStoragePolicyID,
	VSphereNetwork, VSphereResourcePool, VSphereFolder, VSphereSSHAuthorizedKey, VSphereTLSThumbprint, VSphereInsecure,
	VSphereCloneMode, VSphereControlPlaneEndpoint, DeployTKGOnVSphere7,
	VSphereNumCPUs, VSphereMemMiB, VSphereDiskGiB, VSphereControlPlaneNumCPUs, VSphereControlPlaneMemMiB,
	VSphereControlPlaneDiskGiB, VSphereWorkerNumCPUs, VSphereWorkerMemMiB, VSphereWorkerDiskGiB,
	NTPServers, ControlPlaneNodeNameservers, WorkerNodeNameservers, NodeIPAMIPPoolName, EnableAuditLogging,
	CustomImageRepositorySkipTLSVerify, CustomImageRepositoryCACertificate, ProxyCACert, NodeSystemWideProxy,
	EnableAutoscaler, AutoscalerMaxNodesTotal, AutoscalerScaleDownDelayAfterAdd, AutoscalerScaleDownDelayAfterDelete,
	AutoscalerScaleDownDelayAfterFailure, AutoscalerScaleDownUnneededTime, AutoscalerMaxNodeProvisionTime,
}, append(autoscalerSizes, identityVariables...)...)

func known(name string) bool { return slices.Contains(knownVariables, name) }

// Known returns the names of every variable slipway reads.
func Known() []string { return slices.Clone(knownVariables) }

// NotKnown says that name is no variable slipway reads and, when one it reads is spelt within
// two letters of it (a letter wrong, missing, extra or two swapped, or the case), names that one.
func NotKnown(name string) string {
	msg := name + " is not a configuration variable slipway knows"
	best, bestDistance := "", 3
	for _, k := range knownVariables {
		if d := distance(strings.ToUpper(name), k); d < bestDistance {
			best, bestDistance = k, d
		}
	}
	if best != "" {
		msg += " (did you mean " + best + "?)"
	}
	return msg
}

// distance is the Levenshtein distance of a and b: the fewest letters inserted, deleted or
// replaced that turn one into the other.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			replace := prev[j-1]
			if a[i-1] != b[j-1] {
				replace++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, replace)
		}
		prev = cur
	}
	return prev[len(b)]
}
