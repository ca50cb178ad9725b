//lint:file-ignore SA1019 CAPV's manager serves the conversion webhooks of its deprecated v1beta1 API, so it registers that version as upstream's main.go does.

package components

import (
	"context"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"
	"sigs.k8s.io/cluster-api/controllers/crdmigrator"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"

	capvv1beta1 "sigs.k8s.io/cluster-api-provider-vsphere/api/govmomi/v1beta1"
	capvv1 "sigs.k8s.io/cluster-api-provider-vsphere/api/govmomi/v1beta2"
	capvcontrollers "sigs.k8s.io/cluster-api-provider-vsphere/controllers"
	capvfeature "sigs.k8s.io/cluster-api-provider-vsphere/feature"
	capvcontext "sigs.k8s.io/cluster-api-provider-vsphere/pkg/context"
	capvwebhooks "sigs.k8s.io/cluster-api-provider-vsphere/webhooks"

	"github.com/slipway-dev/slipway/internal/local/podenv"
	"github.com/slipway-dev/slipway/internal/vsphere/vcenter"
)

// capvController is the vSphere infrastructure provider, CAPV v1.16.1 (image
// cluster-api-vsphere-controller, Deployment capv-controller-manager): CAPV's own reconcilers
// and webhooks of its govmomi mode, set up as its main.go sets them up, against a vCenter (a real
// one, or slipway's simulator). The supervisor mode (vSphere with Tanzu) is not run.
func capvController() Component {
	return Component{Name: "capv-controller-manager", Run: runCAPV}
}

func runCAPV(ctx context.Context, args []string) error {
	f := newCAPIFlags("capv-controller-manager")
	// CAPV's own flags, which its manifest passes or which it documents; the feature gates are
	// CAPV's, not Cluster API's.
	credentialsFile := f.fs.String("credentials-file", "/etc/capv/credentials.yaml", "CAPV's credentials file: username and password of the vCenter for clusters without an identityRef")
	f.fs.String("vm-operator-api-version", "v1alpha5", "VM Operator API version of the supervisor mode, which this component does not run")
	f.fs.String("pod-name", "", "name of the pod the manager runs in")
	f.gates = capvfeature.MutableGates
	if err := f.parse(args); err != nil {
		return err
	}
	pod, err := podenv.Current()
	if err != nil {
		return err
	}
	username, password, err := readCAPVCredentials(pod.Path(*credentialsFile))
	if err != nil {
		return err
	}
	s := newScheme(clusterv1.AddToScheme, bootstrapv1.AddToScheme, controlplanev1.AddToScheme, ipamv1.AddToScheme,
		capvv1beta1.AddToScheme, capvv1.AddToScheme)
	mgr, err := newCAPIManager(f, "capv-controller-manager-runtime", s, true)
	if err != nil {
		return err
	}
	cc, _, err := setupClusterCache(ctx, mgr, "capv-controller-manager", *f.watchFilter)
	if err != nil {
		return err
	}
	namespace := os.Getenv("POD_NAMESPACE")
	controllerCtx := &capvcontext.ControllerManagerContext{
		Namespace:               namespace,
		Name:                    os.Getenv("POD_NAME"),
		LeaderElectionID:        "capv-controller-manager-runtime",
		LeaderElectionNamespace: namespace,
		Client:                  mgr.GetClient(),
		Logger:                  ctrl.Log.WithName("capv"),
		Scheme:                  s,
		Username:                username,
		Password:                password,
		WatchFilterValue:        *f.watchFilter,
	}
	for _, w := range []interface{ SetupWebhookWithManager(ctrl.Manager) error }{
		&capvwebhooks.VSphereClusterTemplate{}, &capvwebhooks.VSphereMachine{}, &capvwebhooks.VSphereMachineTemplate{},
		&capvwebhooks.VSphereVM{}, &capvwebhooks.VSphereDeploymentZone{}, &capvwebhooks.VSphereFailureDomain{},
	} {
		if err := w.SetupWebhookWithManager(mgr); err != nil {
			return err
		}
	}
	concurrency := controller.Options{MaxConcurrentReconciles: 10}
	if err := capvcontrollers.AddClusterControllerToManager(ctx, controllerCtx, mgr, false, concurrency); err != nil {
		return err
	}
	if err := capvcontrollers.AddMachineControllerToManager(ctx, controllerCtx, mgr, false, concurrency); err != nil {
		return err
	}
	if err := capvcontrollers.AddVMControllerToManager(ctx, controllerCtx, mgr, cc, concurrency); err != nil {
		return err
	}
	if err := capvcontrollers.AddVsphereClusterIdentityControllerToManager(ctx, controllerCtx, mgr, concurrency); err != nil {
		return err
	}
	if err := capvcontrollers.AddVSphereDeploymentZoneControllerToManager(ctx, controllerCtx, mgr, concurrency); err != nil {
		return err
	}
	if err := (&crdmigrator.CRDMigrator{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Config: map[client.Object]crdmigrator.ByObjectConfig{
			&capvv1.VSphereCluster{}:         {UseCache: true, UseStatusForStorageVersionMigration: true},
			&capvv1.VSphereClusterTemplate{}: {UseCache: false},
			&capvv1.VSphereMachine{}:         {UseCache: true, UseStatusForStorageVersionMigration: true},
			&capvv1.VSphereMachineTemplate{}: {UseCache: true},
			&capvv1.VSphereVM{}:              {UseCache: true, UseStatusForStorageVersionMigration: true},
			&capvv1.VSphereClusterIdentity{}: {UseCache: true, UseStatusForStorageVersionMigration: true},
			&capvv1.VSphereDeploymentZone{}:  {UseCache: true, UseStatusForStorageVersionMigration: true},
			&capvv1.VSphereFailureDomain{}:   {UseCache: true},
		},
	}).SetupWithManager(ctx, mgr, controller.Options{MaxConcurrentReconciles: 1}); err != nil {
		return err
	}
	return mgr.Start(logr.NewContext(ctx, controllerCtx.Logger))
}

// readCAPVCredentials reads CAPV's credentials file. A missing file leaves them empty, as CAPV
// does: clusters then need an identityRef.
func readCAPVCredentials(path string) (username, password string, err error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	if username, password, err = vcenter.ParseCAPVCredentials(data); err != nil {
		return "", "", fmt.Errorf("%s: %w", path, err)
	}
	return username, password, nil
}
