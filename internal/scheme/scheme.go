package scheme

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	bootstrapv1 "sigs.k8s.io/cluster-api/api/bootstrap/kubeadm/v1beta2"
	controlplanev1 "sigs.k8s.io/cluster-api/api/controlplane/kubeadm/v1beta2"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	ipamv1 "sigs.k8s.io/cluster-api/api/ipam/v1beta2"

	kappctrlv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/kappctrl/v1alpha1"
	pkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apis/packaging/v1alpha1"
	datapkgingv1alpha1 "github.com/vmware-tanzu/carvel-kapp-controller/pkg/apiserver/apis/datapackaging/v1alpha1"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
	corev1alpha2 "github.com/slipway-dev/slipway/api/core/v1alpha2"
	cpiv1alpha1 "github.com/slipway-dev/slipway/api/cpi/v1alpha1"
	csiv1alpha1 "github.com/slipway-dev/slipway/api/csi/v1alpha1"
	infrav1 "github.com/slipway-dev/slipway/api/infrastructure/v1beta2"
	runv1alpha1 "github.com/slipway-dev/slipway/api/run/v1alpha1"
	runv1alpha2 "github.com/slipway-dev/slipway/api/run/v1alpha2"
	runv1alpha3 "github.com/slipway-dev/slipway/api/run/v1alpha3"
)

// New returns a scheme with every kind slipway reads or writes.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		apiextensionsv1.AddToScheme,
		clusterv1.AddToScheme,
		bootstrapv1.AddToScheme,
		controlplanev1.AddToScheme,
		ipamv1.AddToScheme,
		runv1alpha1.AddToScheme,
		runv1alpha2.AddToScheme,
		runv1alpha3.AddToScheme,
		cniv1alpha1.AddToScheme,
		cpiv1alpha1.AddToScheme,
		corev1alpha2.AddToScheme,
		csiv1alpha1.AddToScheme,
		infrav1.AddToScheme,
		pkgingv1alpha1.AddToScheme,
		datapkgingv1alpha1.AddToScheme,
		kappctrlv1alpha1.AddToScheme,
	} {
		if err := add(s); err != nil {
			// The schemes are built from static type lists; a failure is a programming error.
			panic(err)
		}
	}
	return s
}
