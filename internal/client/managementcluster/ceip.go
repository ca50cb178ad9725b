package managementcluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// Where a cluster records its CEIP choice: the ConfigMap VMware's telemetry reads its level
// from. slipway only records the choice; nothing is collected or sent.
const (
	ceipNamespace = "vmware-system-telemetry"
	ceipConfigMap = "vmware-telemetry-cluster-ceip"
	ceipLevelKey  = "level"
)

// CEIP statuses, as TKG's `ceip-participation get` prints them.
const (
	CEIPOptIn  = "Opt-in"
	CEIPOptOut = "Opt-out"
)

// CEIP returns the management cluster's CEIP participation: Opt-in when its level is recorded
// and not disabled.
func CEIP(ctx context.Context, c client.Client) (string, error) {
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: ceipNamespace, Name: ceipConfigMap}, cm)
	switch {
	case apierrors.IsNotFound(err):
		return CEIPOptOut, nil
	case err != nil:
		return "", fmt.Errorf("failed to read the CEIP participation: %w", err)
	case cm.Data[ceipLevelKey] == "" || cm.Data[ceipLevelKey] == "disabled":
		return CEIPOptOut, nil
	}
	return CEIPOptIn, nil
}

// SetCEIP records the management cluster's CEIP participation.
func SetCEIP(ctx context.Context, c client.Client, optIn bool) error {
	level := "disabled"
	if optIn {
		level = "standard"
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ceipNamespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("failed to create namespace %s: %w", ceipNamespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ceipNamespace, Name: ceipConfigMap}}
	_, err := controllerutil.CreateOrPatch(ctx, c, cm, func() error {
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[ceipLevelKey] = level
		return nil
	})
	if err != nil {
		return fmt.Errorf("failed to record the CEIP participation in %s/%s: %w", ceipNamespace, ceipConfigMap, err)
	}
	return nil
}
