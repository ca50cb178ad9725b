package cluster

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/cluster-api/cmd/clusterctl/client/tree"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
	"github.com/slipway-dev/slipway/internal/progress"
	"github.com/slipway-dev/slipway/internal/scheme"
	"github.com/slipway-dev/slipway/internal/tkg"
)

func topologyCluster(mds ...int32) *clusterv1.Cluster {
	c := &clusterv1.Cluster{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc",
		Labels:      map[string]string{"cluster-role.tkg.tanzu.vmware.com/management": "", "run.tanzu.vmware.com/tkr": "v1.35.4---vmware.1-tkg.1"},
		Annotations: map[string]string{"tkg/plan": "prod"}}}
	c.Spec.Topology.Version = "v1.35.4+vmware.1"
	c.Spec.Topology.ControlPlane.Replicas = ptr.To[int32](1)
	for i, n := range mds {
		c.Spec.Topology.Workers.MachineDeployments = append(c.Spec.Topology.Workers.MachineDeployments,
			clusterv1.MachineDeploymentTopology{Class: "tkg-worker", Name: "md-" + string(rune('0'+i)), Replicas: ptr.To(n)})
	}
	return c
}

func TestSummarize(t *testing.T) {
	c := topologyCluster(1)
	c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
	c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
	c.Status.ControlPlane = &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](1), ReadyReplicas: ptr.To[int32](1)}
	c.Status.Workers = &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](1)}
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue}}
	s := Summarize(c, time.Now())
	if s.Status != "running" || s.ControlPlane != "1/1" || s.Workers != "1/2" || s.Plan != "prod" || s.RolesColumn() != "management" ||
		s.TKR != "v1.35.4---vmware.1-tkg.1" || s.Kubernetes != "v1.35.4+vmware.1" {
		t.Errorf("summary %+v", s)
	}
	c.Status.Conditions = append(c.Status.Conditions, metav1.Condition{Type: clusterv1.ClusterScalingUpCondition, Status: metav1.ConditionTrue})
	if s := Summarize(c, time.Now()); s.Status != "updating" {
		t.Errorf("a cluster scaling up is %q, want updating", s.Status)
	}
	c.DeletionTimestamp = ptr.To(metav1.Now())
	if s := Summarize(c, time.Now()); s.Status != "deleting" {
		t.Errorf("a deleted cluster is %q, want deleting", s.Status)
	}
	if s := Summarize(topologyCluster(1), time.Now()); s.Status != "creating" {
		t.Errorf("a new cluster is %q, want creating", s.Status)
	}
}

// TestStalled: a creation or an upgrade the CLI recorded and nothing observed for longer than
// its timeout is stalled, as TKG's list says.
func TestStalled(t *testing.T) {
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	record := func(c *clusterv1.Cluster, operation string) *clusterv1.Cluster {
		annotations := tkg.OperationAnnotations(operation, start, 30*time.Minute)
		maps.Copy(c.Annotations, annotations)
		return c
	}
	created := func(c *clusterv1.Cluster, conds ...metav1.Condition) *clusterv1.Cluster {
		c.Status.Initialization.ControlPlaneInitialized = ptr.To(true)
		c.Status.Initialization.InfrastructureProvisioned = ptr.To(true)
		c.Status.ControlPlane = &clusterv1.ClusterControlPlaneStatus{DesiredReplicas: ptr.To[int32](1), ReadyReplicas: ptr.To[int32](1)}
		c.Status.Workers = &clusterv1.WorkersStatus{DesiredReplicas: ptr.To[int32](2), ReadyReplicas: ptr.To[int32](1)}
		c.Status.Conditions = conds
		return c
	}
	isTrue := func(t string) metav1.Condition { return metav1.Condition{Type: t, Status: metav1.ConditionTrue} }
	isFalse := func(t string) metav1.Condition { return metav1.Condition{Type: t, Status: metav1.ConditionFalse} }
	creating := record(topologyCluster(1), tkg.OperationCreate)
	updating := created(record(topologyCluster(1), tkg.OperationUpgrade), isTrue(clusterv1.AvailableCondition), isTrue(clusterv1.ClusterRollingOutCondition))
	upgradedLongAgo := record(topologyCluster(1), tkg.OperationUpgrade)
	// A scale long after an upgrade: machines are added, none rolls out to another version.
	scaledAfterUpgrade := created(record(topologyCluster(1), tkg.OperationUpgrade), isTrue(clusterv1.AvailableCondition), isTrue(clusterv1.ClusterScalingUpCondition))
	// An old cluster that lost a worker: its creation is complete.
	oldNotAvailable := created(record(topologyCluster(1), tkg.OperationCreate), isFalse(clusterv1.AvailableCondition))
	noWorkerReady := created(record(topologyCluster(1), tkg.OperationCreate), isTrue(clusterv1.AvailableCondition))
	noWorkerReady.Status.Workers.ReadyReplicas = ptr.To[int32](0)
	for _, tc := range []struct {
		name    string
		c       *clusterv1.Cluster
		elapsed time.Duration
		want    string
	}{
		{"creating within its timeout", creating, 29 * time.Minute, "creating"},
		{"creating past its timeout", creating, 31 * time.Minute, "createStalled"},
		{"upgrading within its timeout", updating, 10 * time.Minute, "updating"},
		{"upgrading past its timeout", updating, 31 * time.Minute, "updateStalled"},
		{"a creation is not stalled by an upgrade's record", upgradedLongAgo, time.Hour, "creating"},
		{"no record", topologyCluster(1), time.Hour, "creating"},
		{"a scale long after an upgrade", scaledAfterUpgrade, time.Hour, "updating"},
		{"an old cluster that is not Available", oldNotAvailable, 24 * time.Hour, "updating"},
		{"a creation with no worker ready yet", noWorkerReady, 31 * time.Minute, "createStalled"},
	} {
		if got := Summarize(tc.c, start.Add(tc.elapsed)).Status; got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestScale(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	for _, tc := range []struct {
		name    string
		mds     []int32
		o       ScaleOptions
		want    []int32
		wantErr string
	}{
		{"spread, remainder first", []int32{1, 1, 1}, ScaleOptions{Workers: 5}, []int32{2, 2, 1}, ""},
		{"one pool", []int32{1, 1}, ScaleOptions{Workers: 4, NodePool: "md-1"}, []int32{1, 4}, ""},
		{"no such pool", []int32{1}, ScaleOptions{Workers: 2, NodePool: "md-9"}, nil, "could not find node pool with name md-9"},
		{"fewer than pools", []int32{1, 1, 1}, ScaleOptions{Workers: 2}, nil, "worker count: 2, machine deployment count: 3"},
		{"nothing", []int32{1}, ScaleOptions{}, nil, "must be greater than 0"},
		{"negative", []int32{1}, ScaleOptions{Workers: -1}, nil, "must be greater than 0"},
		{"even control plane", []int32{1}, ScaleOptions{ControlPlane: 2}, nil, "should be an odd number but provided 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(topologyCluster(tc.mds...)).Build()
			err := Scale(t.Context(), c, key, tc.o, progress.ForWriter(&strings.Builder{}))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := &clusterv1.Cluster{}
			if err := c.Get(t.Context(), key, got); err != nil {
				t.Fatal(err)
			}
			for i, md := range got.Spec.Topology.Workers.MachineDeployments {
				if *md.Replicas != tc.want[i] {
					t.Errorf("%s has %d replicas, want %d", md.Name, *md.Replicas, tc.want[i])
				}
			}
		})
	}
}

func TestPlanUpgrade(t *testing.T) {
	key := client.ObjectKey{Namespace: "default", Name: "wc"}
	c := topologyCluster(1)
	c.Labels[runv1alpha3.LabelTKR], c.Spec.Topology.Version = "v1.33.1---vmware.1-tkg.1", "v1.33.1+vmware.1"
	c.Status.Conditions = []metav1.Condition{{Type: runv1alpha3.ConditionUpdatesAvailable, Status: metav1.ConditionTrue,
		Message: "[v1.34.4+vmware.1-tkg.1 v1.35.4+vmware.1-tkg.1]"}}
	var objs []client.Object
	objs = append(objs, c)
	for _, v := range []string{"v1.34.4+vmware.1-tkg.1", "v1.35.4+vmware.1-tkg.1"} {
		tkr := &runv1alpha3.TanzuKubernetesRelease{ObjectMeta: metav1.ObjectMeta{Name: strings.ReplaceAll(v, "+", "---")}}
		tkr.Spec.Version, tkr.Spec.Kubernetes.Version = v, strings.TrimSuffix(v, "-tkg.1")
		objs = append(objs, tkr)
	}
	fc := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objs...).Build()
	for tkr, want := range map[string]string{"": "v1.35.4+vmware.1", "v1.34": "v1.34.4+vmware.1", "v1.35.4---vmware.1-tkg.1": "v1.35.4+vmware.1"} {
		u, err := PlanUpgrade(t.Context(), fc, key, tkr)
		if err != nil || u.Kubernetes != want {
			t.Errorf("--tkr %q: got %+v, %v; want Kubernetes %s", tkr, u, err, want)
		}
	}
	for _, prefix := range []string{"v1.36", "v1.3"} {
		if _, err := PlanUpgrade(t.Context(), fc, key, prefix); err == nil || !strings.Contains(err.Error(), "no compatible upgrades found matching the TKR name/prefix '"+prefix+"'") {
			t.Errorf("prefix %s, which names no release: %v", prefix, err)
		}
	}
	c.Status.Conditions[0].Status = metav1.ConditionFalse
	fc = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c).Build()
	if _, err := PlanUpgrade(t.Context(), fc, key, ""); err == nil || err.Error() != "no available upgrades for cluster 'wc', namespace 'default'" {
		t.Errorf("no updates: %v", err)
	}
}

func TestPrintTreeOrdersAndNamesAsClusterctl(t *testing.T) {
	root := topologyCluster(1)
	root.SetUID("root")
	root.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster"))
	root.Status.Conditions = []metav1.Condition{{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue, Reason: "Available"}}
	tr := tree.NewObjectTree(root, tree.ObjectTreeOptions{})
	workers := tree.VirtualObject("default", "WorkerGroup", "Workers")
	tr.Add(root, workers)
	kcp := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-cp", UID: "kcp"}}
	kcp.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Machine"))
	tr.Add(root, kcp, tree.ObjectMetaName("ControlPlane"))
	var out strings.Builder
	if err := PrintTree(&out, tr); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(out.String()), " ")
	if !strings.Contains(got, "/wc True Available") || !strings.Contains(got, "├─ControlPlane - Machine/wc-cp") || !strings.Contains(got, "└─Workers") ||
		strings.Index(got, "ControlPlane") > strings.Index(got, "Workers") {
		t.Errorf("tree:\n%s", out.String())
	}
}

// TestPausedFor: an upgrade that waits on a cluster still paused by the upgrade webhook says so,
// naming the release and where to look.
func TestPausedFor(t *testing.T) {
	c := topologyCluster(1)
	c.Spec.Paused = ptr.To(true)
	c.Annotations["tkg.tanzu.vmware.com/paused"] = "v1.35.4---vmware.1-tkg.1"
	w := waiter{c: fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c).Build(), key: client.ObjectKeyFromObject(c)}
	got := w.pausedFor(t.Context())
	for _, want := range []string{"paused until its ClusterBootstrap follows release v1.35.4---vmware.1-tkg.1", "kubectl get clusterbootstrap -n default wc"} {
		if !strings.Contains(got, want) {
			t.Errorf("pausedFor: %q lacks %q", got, want)
		}
	}
	c.Spec.Paused = ptr.To(false)
	w.c = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c).Build()
	if got := w.pausedFor(t.Context()); got != "" {
		t.Errorf("an unpaused cluster: %q", got)
	}
}

// TestNotInstalled: the core packages a management cluster's ClusterBootstrap names but the
// addons manager does not install (its own kapp-controller, another infrastructure's CPI and
// CSI) are not waited for.
func TestNotInstalled(t *testing.T) {
	c := topologyCluster(1)
	c.Labels["cluster-role.tkg.tanzu.vmware.com/management"] = ""
	c.Spec.InfrastructureRef = clusterv1.ContractVersionedObjectReference{Kind: "LocalCluster", Name: "wc-x", APIGroup: "infrastructure.cluster.x-k8s.io"}
	cpi := &runv1alpha3.ClusterBootstrapPackage{RefName: "vsphere-cpi.tanzu.vmware.com.1.27.0+vmware.1-tkg.1", ValuesFrom: &runv1alpha3.ValuesFrom{
		ProviderRef: &corev1.TypedLocalObjectReference{APIGroup: ptr.To("cpi.tanzu.vmware.com"), Kind: "VSphereCPIConfig", Name: "x"}}}
	cb := &runv1alpha3.ClusterBootstrap{Spec: &runv1alpha3.ClusterBootstrapTemplateSpec{
		Kapp: &runv1alpha3.ClusterBootstrapPackage{RefName: "kapp-controller.tanzu.vmware.com.0.50.1+vmware.1-tkg.1"},
		CNI:  &runv1alpha3.ClusterBootstrapPackage{RefName: "antrea.tanzu.vmware.com.1.13.1+vmware.1-tkg.1"},
		CPI:  cpi,
	}}
	skip, err := notInstalled(t.Context(), fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c).Build(), client.ObjectKeyFromObject(c), cb)
	if err != nil {
		t.Fatal(err)
	}
	if !skip[cb.Spec.Kapp] || !skip[cpi] || skip[cb.Spec.CNI] || len(skip) != 2 {
		t.Errorf("skipped %v: want the management cluster's kapp-controller and the vSphere CPI only", skip)
	}
}

// TestWaitsRefreshTheObservedTime checks TKG's refresh of TKGOperationLastObservedTimestamp: a
// wait that sees the Available condition change after it writes the time; one that sees nothing
// new leaves it; a finished upgrade's record is removed, another operation's kept.
func TestWaitsRefreshTheObservedTime(t *testing.T) {
	start := time.Now().Add(-time.Hour).UTC()
	c := topologyCluster(1)
	annotations := tkg.OperationAnnotations(tkg.OperationUpgrade, start, 30*time.Minute)
	maps.Copy(c.Annotations, annotations)
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1.AvailableCondition, Status: metav1.ConditionFalse,
		LastTransitionTime: metav1.NewTime(start.Add(-time.Minute))}}
	fc := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c).WithStatusSubresource(c).Build()
	w := waiter{c: fc, key: client.ObjectKeyFromObject(c)}
	get := func() *clusterv1.Cluster {
		got := &clusterv1.Cluster{}
		if err := fc.Get(t.Context(), w.key, got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	w.observed(t.Context(), get())
	if got := get().Annotations[tkg.AnnotationOperationLastObservedTimestamp]; got != annotations[tkg.AnnotationOperationLastObservedTimestamp] {
		t.Errorf("nothing changed, yet the observed time moved to %s", got)
	}
	moved := get()
	moved.Status.Conditions[0].Status, moved.Status.Conditions[0].LastTransitionTime = metav1.ConditionTrue, metav1.NewTime(start.Add(10*time.Minute))
	if err := fc.Status().Update(t.Context(), moved); err != nil {
		t.Fatal(err)
	}
	w.observed(t.Context(), get())
	observed, err := time.Parse(tkg.TimestampLayout, get().Annotations[tkg.AnnotationOperationLastObservedTimestamp])
	if err != nil || time.Since(observed) > time.Minute {
		t.Errorf("the Available change was not observed: %v, %v", observed, err)
	}
	if err := clearOperation(t.Context(), fc, w.key, tkg.OperationCreate); err != nil || get().Annotations[tkg.AnnotationOperationInfo] == "" {
		t.Errorf("another operation's record was removed: %v", err)
	}
	if err := clearOperation(t.Context(), fc, w.key, tkg.OperationUpgrade); err != nil || get().Annotations[tkg.AnnotationOperationInfo] != "" {
		t.Errorf("the finished upgrade's record is still there: %v", err)
	}
}

// TestPrintTreeGroupsAndConditions: alike machines are one "2 Machines..." row unless their
// members are asked for, and an object whose conditions are asked for lists them under it.
func TestPrintTreeGroupsAndConditions(t *testing.T) {
	print := func(opts tree.ObjectTreeOptions) string {
		root := topologyCluster(1)
		root.SetUID("root")
		root.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Cluster"))
		root.Status.Conditions = []metav1.Condition{{Type: clusterv1.AvailableCondition, Status: metav1.ConditionTrue, Reason: "Available"},
			{Type: clusterv1.ClusterRemoteConnectionProbeCondition, Status: metav1.ConditionTrue, Reason: "ProbeSucceeded"}}
		tr := tree.NewObjectTree(root, opts)
		md := &clusterv1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "wc-md-0", UID: "md"}}
		md.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("MachineDeployment"))
		tr.Add(root, md, tree.GroupingObject(true))
		for _, name := range []string{"wc-md-0-a", "wc-md-0-b"} {
			m := &clusterv1.Machine{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}
			m.SetGroupVersionKind(clusterv1.GroupVersion.WithKind("Machine"))
			m.Status.Conditions = []metav1.Condition{{Type: clusterv1.ReadyCondition, Status: metav1.ConditionTrue, Reason: "Ready"}}
			tr.Add(md, m)
		}
		var out strings.Builder
		if err := PrintTree(&out, tr); err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(out.String()), " ")
	}
	if got := print(tree.ObjectTreeOptions{Grouping: true}); !strings.Contains(got, "└─2 Machines... True Ready") || strings.Contains(got, "wc-md-0-a") || strings.Contains(got, "RemoteConnectionProbe") {
		t.Errorf("grouped, no conditions asked for: %s", got)
	}
	got := print(tree.ObjectTreeOptions{Grouping: false, ShowOtherConditions: "Cluster"})
	if !strings.Contains(got, "Machine/wc-md-0-a") || !strings.Contains(got, "Machine/wc-md-0-b") || !strings.Contains(got, "│ └─RemoteConnectionProbe True ProbeSucceeded") {
		t.Errorf("members and the Cluster's conditions: %s", got)
	}
}

// TestDelete: a workload cluster is deleted in two steps, the second naming what holds it when it
// outlasts the timeout; a management cluster and a missing one are refused with the command that
// helps.
func TestDelete(t *testing.T) {
	wc := topologyCluster(1)
	delete(wc.Labels, tkg.LabelManagementCluster)
	wc.Finalizers = []string{clusterv1.ClusterFinalizer}
	mc := topologyCluster(1)
	mc.Name = "mc"
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(wc, mc).Build()
	var out strings.Builder
	p := progress.ForWriter(&out)

	err := Delete(t.Context(), c, client.ObjectKeyFromObject(wc), time.Second, p)
	var se *progress.StepError
	if !errors.As(err, &se) || se.Step != "cluster gone" || !strings.Contains(err.Error(), "cluster wc is not deleted: finalizers [cluster.cluster.x-k8s.io]") || !strings.Contains(err.Error(), "(after 1s)") ||
		!strings.Contains(err.Error(), "`slipway cluster get wc -n default` shows what is left") {
		t.Errorf("a cluster its finalizer holds: %v", err)
	}
	t.Logf("the timeout says: %v", err)
	if !strings.Contains(out.String(), "Workload cluster 'wc' is being deleted") || strings.Contains(out.String(), "Workload cluster 'wc' deleted") {
		t.Errorf("printed:\n%s", out.String())
	}
	if steps := p.Steps(); len(steps) != 2 || steps[0].Name != "delete" || steps[0].Failed || !steps[1].Failed {
		t.Errorf("steps %+v", steps)
	}

	free := topologyCluster(1)
	free.Name = "free"
	delete(free.Labels, tkg.LabelManagementCluster)
	if err := c.Create(t.Context(), free); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Delete(t.Context(), c, client.ObjectKeyFromObject(free), 10*time.Second, progress.ForWriter(&out)); err != nil || !strings.Contains(out.String(), "Workload cluster 'free' deleted") {
		t.Errorf("a cluster nothing holds: %v\n%s", err, out.String())
	}
	if err := Delete(t.Context(), c, client.ObjectKeyFromObject(free), time.Second, p); err == nil || !strings.Contains(err.Error(), "`slipway cluster list -A` lists the clusters") {
		t.Errorf("a missing cluster: %v", err)
	}
	if err := Delete(t.Context(), c, client.ObjectKeyFromObject(mc), time.Second, p); err == nil || !strings.Contains(err.Error(), "`slipway management-cluster delete` deletes it") {
		t.Errorf("the management cluster: %v", err)
	}
}

// TestRecordOutlastsAWebhookOfTheMoment: the flow's last write is tried again while a webhook
// cannot be called (as its pod starts on a new node after an upgrade), and a refusal that lasts
// is returned.
func TestRecordOutlastsAWebhookOfTheMoment(t *testing.T) {
	c := topologyCluster(1)
	maps.Copy(c.Annotations, tkg.OperationAnnotations(tkg.OperationUpgrade, time.Now(), 30*time.Minute))
	refusals := 2
	webhookDown := apierrors.NewInternalError(errors.New(`failed calling webhook "tkr-resolver-cluster-webhook.tanzu.vmware.com": connection refused`))
	fc := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(c).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if refusals > 0 {
				refusals--
				return webhookDown
			}
			return cl.Patch(ctx, obj, patch, opts...)
		}}).Build()
	key := client.ObjectKeyFromObject(c)
	if err := clearOperation(t.Context(), fc, key, tkg.OperationUpgrade); err != nil {
		t.Fatalf("two refusals of the moment: %v", err)
	}
	got := &clusterv1.Cluster{}
	if err := fc.Get(t.Context(), key, got); err != nil || got.Annotations[tkg.AnnotationOperationInfo] != "" {
		t.Errorf("the record is still there after the retries: %v", err)
	}

	refusals = 100
	maps.Copy(got.Annotations, tkg.OperationAnnotations(tkg.OperationUpgrade, time.Now(), 30*time.Minute))
	if err := fc.Update(t.Context(), got); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	if err := clearOperation(ctx, fc, key, tkg.OperationUpgrade); !apierrors.IsInternalError(err) {
		t.Errorf("a lasting refusal: %v", err)
	}
}

// TestMissingClusterSaysHowToFindIt: each flow that reads a workload cluster says, when there is
// none of that name in the namespace, how to list the clusters, rather than the API's "not found".
func TestMissingClusterSaysHowToFindIt(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(topologyCluster(1)).Build()
	key := client.ObjectKey{Namespace: "default", Name: "nosuch"}
	p := progress.ForWriter(&strings.Builder{})
	const want = "cluster nosuch not found in namespace default: `slipway cluster list -A` lists the clusters"
	for name, run := range map[string]func() error{
		"get":     func() error { _, _, _, err := Get(t.Context(), c, key, TreeOptions{}); return err },
		"delete":  func() error { return Delete(t.Context(), c, key, time.Second, p) },
		"scale":   func() error { return Scale(t.Context(), c, key, ScaleOptions{Workers: 2}, p) },
		"upgrade": func() error { _, err := availableVersions(t.Context(), c, key); return err },
		"node pools": func() error {
			_, err := topologyOf(t.Context(), c, key)
			return err
		},
		"kubeconfig": func() error { _, err := AdminKubeconfig(t.Context(), c, key); return err },
	} {
		if err := run(); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
	// A cluster that is there but whose kubeconfig Secret is not written yet is told apart.
	_, err := AdminKubeconfig(t.Context(), c, client.ObjectKey{Namespace: "default", Name: "wc"})
	if err == nil || !strings.Contains(err.Error(), "cluster wc has no kubeconfig yet") || !strings.Contains(err.Error(), "Secret wc-kubeconfig") {
		t.Errorf("a cluster without its kubeconfig Secret: %v", err)
	}
}
