package app_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/app"
	"github.com/slipway-dev/slipway/internal/test/envtest"
)

var env *envtest.Environment

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m, func(e *envtest.Environment) {
		env = e
		e.StartManager(func(mgr ctrl.Manager) error {
			return (&app.Reconciler{Client: mgr.GetClient(), Config: e.Config}).SetupWithManager(mgr)
		})
	}))
}

// namespace creates a namespace with a service account that may do anything in it.
func namespace(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "deployer"}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "deployer"},
			// envtest runs no controller-manager, so the aggregated "admin" role is empty.
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "deployer", Namespace: name}},
		},
	} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
}

const configMapTemplate = `#@ load("@ytt:data", "data")
#@ for name in data.values.names:
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: #@ name
data:
  greeting: #@ data.values.greeting
#@ end
`

const valuesSchema = `#@data/values-schema
---
greeting: hello
#@schema/default ["one"]
names:
- ""
`

func inlineApp(ns, name string, values string) *kappctrlv1alpha1.App {
	a := &kappctrlv1alpha1.App{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: kappctrlv1alpha1.AppSpec{
			ServiceAccountName: "deployer",
			Fetch: []kappctrlv1alpha1.AppFetch{{Inline: &kappctrlv1alpha1.AppFetchInline{Paths: map[string]string{
				"config/config.yml": configMapTemplate, "config/schema.yml": valuesSchema,
			}}}},
			Template: []kappctrlv1alpha1.AppTemplate{{Ytt: &kappctrlv1alpha1.AppTemplateYtt{Paths: []string{"config"}}}},
			Deploy:   []kappctrlv1alpha1.AppDeploy{{Kapp: &kappctrlv1alpha1.AppDeployKapp{RawOptions: []string{"--wait-timeout=30s"}}}},
		},
	}
	if values != "" {
		a.Spec.Template[0].Ytt.ValuesFrom = []kappctrlv1alpha1.AppTemplateValuesSource{{SecretRef: &kappctrlv1alpha1.AppTemplateValuesSourceRef{Name: values}}}
	}
	return a
}

func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	envtest.Eventually(t, 45*time.Second, what, f)
}

func condition(c client.Client, key client.ObjectKey, want kappctrlv1alpha1.ConditionType) func() error {
	return func() error {
		a := &kappctrlv1alpha1.App{}
		if err := c.Get(context.Background(), key, a); err != nil {
			return err
		}
		for _, cond := range a.Status.Conditions {
			if cond.Type == want && cond.Status == corev1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("conditions %+v, friendly %q, error %q", a.Status.Conditions, a.Status.FriendlyDescription, a.Status.UsefulErrorMessage)
	}
}

func configMapData(c client.Client, ns, name string) (string, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, cm); err != nil {
		return "", err
	}
	return cm.Data["greeting"], nil
}

func TestAppDeploysValuesChangesPrunesAndDeletes(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-lifecycle")
	values := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app-lifecycle", Name: "values"},
		StringData: map[string]string{"values.yml": "greeting: hi\nnames: [one, two]\n"},
	}
	if err := env.Client.Create(ctx, values); err != nil {
		t.Fatal(err)
	}
	a := inlineApp("app-lifecycle", "greeter", "values")
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(a)
	eventually(t, "ReconcileSucceeded", condition(env.Client, key, kappctrlv1alpha1.ReconcileSucceeded))
	for _, name := range []string{"one", "two"} {
		if got, err := configMapData(env.Client, "app-lifecycle", name); err != nil || got != "hi" {
			t.Fatalf("ConfigMap %s = %q, %v", name, got, err)
		}
	}
	if err := env.Client.Get(ctx, key, a); err != nil {
		t.Fatal(err)
	}
	if a.Status.FriendlyDescription != "Reconcile succeeded" || a.Status.Deploy == nil || a.Status.Deploy.KappDeployStatus.AssociatedResources.Label == "" {
		t.Errorf("status %+v", a.Status)
	}
	// A controller's copy of a deployed object carries its labels and annotations, as Cluster
	// API's clones of a ClusterClass's templates do; the app neither prunes nor deletes it.
	one := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "app-lifecycle", Name: "one"}, one); err != nil {
		t.Fatal(err)
	}
	clone := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "app-lifecycle", Name: "one-clone", Labels: one.Labels, Annotations: one.Annotations}, Data: one.Data}
	if err := env.Client.Create(ctx, clone); err != nil {
		t.Fatal(err)
	}
	cloneKept := func() error {
		if _, err := configMapData(env.Client, "app-lifecycle", "one-clone"); err != nil {
			return fmt.Errorf("the copy a controller made was removed: %w", err)
		}
		return nil
	}

	t.Run("a values change is deployed and a dropped object pruned", func(t *testing.T) {
		values.StringData = map[string]string{"values.yml": "greeting: bonjour\nnames: [one]\n"}
		if err := env.Client.Update(ctx, values); err != nil {
			t.Fatal(err)
		}
		eventually(t, "new value", func() error {
			if got, err := configMapData(env.Client, "app-lifecycle", "one"); err != nil || got != "bonjour" {
				return fmt.Errorf("greeting %q, %v", got, err)
			}
			if _, err := configMapData(env.Client, "app-lifecycle", "two"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap two not pruned: %v", err)
			}
			return nil
		})
		if err := cloneKept(); err != nil {
			t.Error(err)
		}
	})

	t.Run("delete removes what was deployed", func(t *testing.T) {
		if err := env.Client.Delete(ctx, a); err != nil {
			t.Fatal(err)
		}
		eventually(t, "objects and App gone", func() error {
			if _, err := configMapData(env.Client, "app-lifecycle", "one"); !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap one still there: %v", err)
			}
			if err := env.Client.Get(ctx, key, &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
				return fmt.Errorf("App still there: %v", err)
			}
			return nil
		})
		if err := cloneKept(); err != nil {
			t.Error(err)
		}
	})
}

func TestAppNoopDeleteKeepsObjects(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-noop")
	a := inlineApp("app-noop", "kept", "")
	a.Spec.NoopDelete = true
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ReconcileSucceeded", condition(env.Client, client.ObjectKeyFromObject(a), kappctrlv1alpha1.ReconcileSucceeded))
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "App gone", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("App still there: %v", err)
		}
		return nil
	})
	if got, err := configMapData(env.Client, "app-noop", "one"); err != nil || got != "hello" {
		t.Fatalf("noopDelete removed the objects: %q %v", got, err)
	}
}

func TestAppFailureSaysWhy(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-failing")
	a := inlineApp("app-failing", "stuck", "")
	// envtest runs no controllers: this Deployment never becomes available.
	a.Spec.Fetch[0].Inline.Paths["config/deployment.yml"] = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`
	a.Spec.Deploy[0].Kapp.RawOptions = []string{"--wait-timeout=2s"}
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(a)
	eventually(t, "ReconcileFailed", condition(env.Client, key, kappctrlv1alpha1.ReconcileFailed))
	if err := env.Client.Get(ctx, key, a); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Status.UsefulErrorMessage, "Deployment app-failing/web: 0 of 1 replicas available") ||
		!strings.HasPrefix(a.Status.FriendlyDescription, "Reconcile failed: Deploying") {
		t.Fatalf("status does not say why: %q / %q", a.Status.FriendlyDescription, a.Status.UsefulErrorMessage)
	}

	t.Run("a template error names the file", func(t *testing.T) {
		bad := inlineApp("app-failing", "bad-template", "")
		bad.Spec.Fetch[0].Inline.Paths["config/config.yml"] = "#@ load(\"@ytt:data\", \"data\")\n---\nvalue: #@ data.values.missing\n"
		if err := env.Client.Create(ctx, bad); err != nil {
			t.Fatal(err)
		}
		eventually(t, "ReconcileFailed", condition(env.Client, client.ObjectKeyFromObject(bad), kappctrlv1alpha1.ReconcileFailed))
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(bad), bad)
		if !strings.Contains(bad.Status.UsefulErrorMessage, "config.yml:3") || !strings.Contains(bad.Status.UsefulErrorMessage, "no .missing field") {
			t.Fatalf("the template error is not useful: %q", bad.Status.UsefulErrorMessage)
		}
	})

	t.Run("the service account's permissions bound what is deployed", func(t *testing.T) {
		limited := inlineApp("app-failing", "limited", "")
		limited.Spec.ServiceAccountName = "nobody"
		if err := env.Client.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "app-failing", Name: "nobody"}}); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, limited); err != nil {
			t.Fatal(err)
		}
		eventually(t, "ReconcileFailed", condition(env.Client, client.ObjectKeyFromObject(limited), kappctrlv1alpha1.ReconcileFailed))
		_ = env.Client.Get(ctx, client.ObjectKeyFromObject(limited), limited)
		if !strings.Contains(limited.Status.UsefulErrorMessage, "forbidden") {
			t.Fatalf("a service account without permissions deployed: %q", limited.Status.UsefulErrorMessage)
		}
	})
}

// TestAppDeploysIntoAnotherCluster deploys through spec.cluster.kubeconfigSecretRef into a second
// API server, as TKG installs kapp-controller on workload clusters.
func TestAppDeploysIntoAnotherCluster(t *testing.T) {
	ctx := t.Context()
	remote, err := envtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer remote.Stop()
	namespace(t, "app-remote")
	kubeconfig, err := clientcmd.Write(kubeconfigFor(remote.Config))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "app-remote", Name: "workload-kubeconfig"},
		Data:       map[string][]byte{"value": kubeconfig},
	}); err != nil {
		t.Fatal(err)
	}
	a := inlineApp("app-remote", "remote", "")
	a.Spec.ServiceAccountName = ""
	a.Spec.Cluster = &kappctrlv1alpha1.AppCluster{Namespace: "kube-public", KubeconfigSecretRef: &kappctrlv1alpha1.AppClusterKubeconfigSecretRef{Name: "workload-kubeconfig"}}
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ReconcileSucceeded", condition(env.Client, client.ObjectKeyFromObject(a), kappctrlv1alpha1.ReconcileSucceeded))
	if got, err := configMapData(remote.Client, "kube-public", "one"); err != nil || got != "hello" {
		t.Fatalf("the remote cluster lacks the ConfigMap: %q %v", got, err)
	}
	if _, err := configMapData(env.Client, "kube-public", "one"); !apierrors.IsNotFound(err) {
		t.Fatalf("the ConfigMap landed on the App's own cluster: %v", err)
	}

	// A noopDelete App whose cluster is gone (its kubeconfig Secret with it) is deleted at once,
	// as the addons manager's kapp-controller App of a deleted workload cluster must be.
	before := a.DeepCopy()
	a.Spec.NoopDelete = true
	if err := env.Client.Patch(ctx, a, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "app-remote", Name: "workload-kubeconfig"}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the noopDelete App of a gone cluster deleted", func() error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the App is still there: %v", err)
		}
		return nil
	})
}

func kubeconfigFor(cfg *rest.Config) clientcmdapi.Config {
	return clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}},
		Contexts:       map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u"}},
		CurrentContext: "x",
	}
}

// TestAppFollowsChangeRules deploys a ConfigMap that kapp's change rules order after a Deployment
// on upsert and before it on delete, as TKG's packages order their webhook users after their
// webhook servers.
func TestAppFollowsChangeRules(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-rules")
	a := inlineApp("app-rules", "ordered", "")
	a.Spec.Fetch[0].Inline.Paths["config/config.yml"] = `apiVersion: v1
kind: ConfigMap
metadata:
  name: after-web
  annotations:
    kapp.k14s.io/change-rule.0: upsert after upserting example.com/web
    kapp.k14s.io/change-rule.1: delete before deleting example.com/web
`
	a.Spec.Fetch[0].Inline.Paths["config/deployment.yml"] = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {kapp.k14s.io/change-group: example.com/web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	web := &appsv1.Deployment{}
	webKey := client.ObjectKey{Namespace: "app-rules", Name: "web"}
	eventually(t, "Deployment applied", func() error { return env.Client.Get(ctx, webKey, web) })
	cmKey := client.ObjectKey{Namespace: "app-rules", Name: "after-web"}
	// envtest runs no controllers: the Deployment stays unavailable until the test says otherwise.
	time.Sleep(2 * time.Second)
	if err := env.Client.Get(ctx, cmKey, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ConfigMap was applied before its change group was ready: %v", err)
	}
	web.Status = appsv1.DeploymentStatus{ObservedGeneration: web.Generation, Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	if err := env.Client.Status().Update(ctx, web); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ReconcileSucceeded", condition(env.Client, client.ObjectKeyFromObject(a), kappctrlv1alpha1.ReconcileSucceeded))

	// A finalizer holds the ConfigMap: the Deployment must wait for it to be gone.
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, cmKey, cm); err != nil {
		t.Fatal(err)
	}
	cm.Finalizers = []string{"example.com/hold"}
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ConfigMap deleting", func() error {
		if err := env.Client.Get(ctx, cmKey, cm); err != nil || cm.DeletionTimestamp.IsZero() {
			return fmt.Errorf("not deleting yet: %v", err)
		}
		return nil
	})
	time.Sleep(2 * time.Second)
	if err := env.Client.Get(ctx, webKey, web); err != nil || !web.DeletionTimestamp.IsZero() {
		t.Fatalf("the Deployment was deleted before the ConfigMap was gone: %v", err)
	}
	cm.Finalizers = nil
	if err := env.Client.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Deployment and App gone", func() error {
		if err := env.Client.Get(ctx, webKey, web); !apierrors.IsNotFound(err) {
			return fmt.Errorf("Deployment still there: %v", err)
		}
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(a), &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("App still there: %v", err)
		}
		return nil
	})
}

// TestFailingAppWithATinySyncPeriodBacksOff checks kapp-controller's floor: a failing App whose
// syncPeriod is 1ms is retried with the backoff, not every millisecond, so its status (and
// resourceVersion) stays still between retries; and an App that never deployed, since its
// service account does not exist, is deleted at once.
func TestFailingAppWithATinySyncPeriodBacksOff(t *testing.T) {
	ctx := t.Context()
	namespace(t, "app-tiny")
	a := inlineApp("app-tiny", "tiny", "")
	a.Spec.ServiceAccountName = "nosuch"
	a.Spec.SyncPeriod = &metav1.Duration{Duration: time.Millisecond}
	if err := env.Client.Create(ctx, a); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(a)
	eventually(t, "ReconcileFailed", condition(env.Client, key, kappctrlv1alpha1.ReconcileFailed))
	// Backing off 2 s, 4 s, 8 s: at most four writes in ten one-second samples; without the
	// floor, every sample sees a new one.
	seen := map[string]bool{}
	for range 10 {
		if err := env.Client.Get(ctx, key, a); err != nil {
			t.Fatal(err)
		}
		seen[a.ResourceVersion] = true
		time.Sleep(time.Second)
	}
	if len(seen) > 5 {
		t.Errorf("the failing App's resourceVersion took %d values in 10 s: it is retried without pause", len(seen))
	}
	if err := env.Client.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the never-deployed App gone", func() error {
		if err := env.Client.Get(ctx, key, &kappctrlv1alpha1.App{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the App is still there: %v", err)
		}
		return nil
	})
}
