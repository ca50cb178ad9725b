package components

import (
	"context"

	"github.com/slipway-dev/slipway/internal/controllers/ipam"
	"github.com/slipway-dev/slipway/internal/scheme"
)

// ipamInClusterController is Cluster API's in-cluster IPAM provider (image
// cluster-api-ipam-in-cluster-controller), TKG's caip-in-cluster: IPAddressClaims naming an
// InClusterIPPool or GlobalInClusterIPPool get IPAddresses.
func ipamInClusterController() Component {
	return Component{Name: "ipam-in-cluster-controller", Run: runIPAMInCluster}
}

func runIPAMInCluster(ctx context.Context, args []string) error {
	f := newCAPIFlags("ipam-in-cluster-controller")
	if err := f.parse(args); err != nil {
		return err
	}
	mgr, err := newCAPIManager(f, "ipam.cluster.x-k8s.io", scheme.New(), false)
	if err != nil {
		return err
	}
	if err := (&ipam.ClaimReconciler{Client: mgr.GetClient(), APIReader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		return err
	}
	for _, kind := range []string{ipam.KindPool, ipam.KindGlobalPool} {
		if err := (&ipam.PoolReconciler{Client: mgr.GetClient(), Kind: kind}).SetupWithManager(mgr); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}
