package webhooks

import (
	"context"
	"net"
	"reflect"
	"slices"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	cniv1alpha1 "github.com/slipway-dev/slipway/api/cni/v1alpha1"
)

// AntreaConfigPath is where the AntreaConfig validating webhook is served.
const AntreaConfigPath = "/validate-cni-tanzu-vmware-com-v1alpha1-antreaconfig"

// AntreaConfig validates AntreaConfig objects as TKG's addons manager does: EndpointSlice needs
// AntreaProxy, noSNAT is not allowed in encap and hybrid modes, and the settings antrea cannot
// change on a running cluster are immutable.
type AntreaConfig struct{}

var _ admission.Validator[*cniv1alpha1.AntreaConfig] = &AntreaConfig{}

// SetupWebhookWithManager registers the webhook at AntreaConfigPath.
func (v *AntreaConfig) SetupWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &cniv1alpha1.AntreaConfig{}).
		WithValidator(v).
		WithValidatorCustomPath(AntreaConfigPath).
		Complete()
}

var configPath = field.NewPath("spec", "antrea", "config")

// ValidateCreate checks the combinations antrea does not support.
func (v *AntreaConfig) ValidateCreate(_ context.Context, obj *cniv1alpha1.AntreaConfig) (admission.Warnings, error) {
	config := obj.Spec.Antrea.AntreaConfigDataValue
	var errs field.ErrorList
	gates := config.FeatureGates
	antreaProxy := gates.AntreaProxy == nil || *gates.AntreaProxy // defaults to true
	if gates.EndpointSlice && !antreaProxy {
		errs = append(errs, field.Invalid(configPath.Child("featureGates", "EndpointSlice"), gates.EndpointSlice,
			"EndpointSlice cannot be enabled while AntreaProxy is disabled: enable AntreaProxy or disable EndpointSlice"))
	}
	mode := config.TrafficEncapMode
	if mode == "" {
		mode = "encap"
	}
	if config.NoSNAT && (mode == "encap" || mode == "hybrid") {
		errs = append(errs, field.Invalid(configPath.Child("noSNAT"), config.NoSNAT,
			"noSNAT must be false when trafficEncapMode is "+mode+": use noEncap or networkPolicyOnly mode to turn SNAT off"))
	}
	errs = append(errs, validateValues(config)...)
	return nil, invalid(obj, errs)
}

// validateValues checks every value that reaches antrea's data values for its type and range:
// the MTU, the port, the CIDRs and the enumerations.
func validateValues(config cniv1alpha1.AntreaConfigDataValue) field.ErrorList {
	var errs field.ErrorList
	if mtu := config.DefaultMTU; mtu != nil {
		n, err := strconv.Atoi(mtu.String())
		if err != nil || n < 68 || n > 65535 {
			errs = append(errs, field.Invalid(configPath.Child("defaultMTU"), mtu.String(),
				"must be a whole number from 68 to 65535, such as 1450, or omitted to discover the node's MTU"))
		}
	}
	if p := config.WireGuard.Port; p < 0 || p > 65535 {
		errs = append(errs, field.Invalid(configPath.Child("wireGuard", "port"), p, "must be a UDP port from 1 to 65535, or 0 for antrea's default"))
	}
	for _, e := range []struct {
		name, value string
		allowed     []string
	}{
		{"trafficEncapMode", config.TrafficEncapMode, []string{"encap", "noEncap", "hybrid", "networkPolicyOnly"}},
		{"tunnelType", config.TunnelType, []string{"geneve", "vxlan", "gre", "stt"}},
		{"trafficEncryptionMode", config.TrafficEncryptionMode, []string{"none", "ipsec", "wireguard"}},
	} {
		if e.value != "" && !slices.Contains(e.allowed, e.value) {
			errs = append(errs, field.NotSupported(configPath.Child(e.name), e.value, e.allowed))
		}
	}
	cidr := func(path *field.Path, value string) {
		if _, _, err := net.ParseCIDR(value); err != nil {
			errs = append(errs, field.Invalid(path, value, "must be a CIDR, such as 10.96.0.0/12"))
		}
	}
	if config.ServiceCIDR != "" {
		cidr(configPath.Child("serviceCIDR"), config.ServiceCIDR)
	}
	for i, c := range config.TransportInterfaceCIDRs {
		cidr(configPath.Child("transportInterfaceCIDRs").Index(i), c)
	}
	for i, c := range config.Egress.EgressExceptCIDRs {
		cidr(configPath.Child("egress", "exceptCIDRs").Index(i), c)
	}
	return errs
}

// ValidateUpdate checks that the settings fixed at install time do not change.
func (v *AntreaConfig) ValidateUpdate(ctx context.Context, oldObj, newObj *cniv1alpha1.AntreaConfig) (admission.Warnings, error) {
	if _, err := v.ValidateCreate(ctx, newObj); err != nil {
		return nil, err
	}
	oldConfig, newConfig := oldObj.Spec.Antrea.AntreaConfigDataValue, newObj.Spec.Antrea.AntreaConfigDataValue
	var errs field.ErrorList
	for _, f := range []struct {
		name     string
		old, new interface{}
	}{
		{"noSNAT", oldConfig.NoSNAT, newConfig.NoSNAT},
		{"disableUdpTunnelOffload", oldConfig.DisableUDPTunnelOffload, newConfig.DisableUDPTunnelOffload},
		{"tlsCipherSuites", oldConfig.TLSCipherSuites, newConfig.TLSCipherSuites},
		{"trafficEncapMode", oldConfig.TrafficEncapMode, newConfig.TrafficEncapMode},
	} {
		if !reflect.DeepEqual(f.old, f.new) {
			errs = append(errs, field.Invalid(configPath.Child(f.name), f.new,
				"field is immutable: antrea cannot change it on a running cluster; create the cluster with the value you need"))
		}
	}
	return nil, invalid(newObj, errs)
}

// ValidateDelete allows every deletion.
func (v *AntreaConfig) ValidateDelete(context.Context, *cniv1alpha1.AntreaConfig) (admission.Warnings, error) {
	return nil, nil
}

func invalid(obj *cniv1alpha1.AntreaConfig, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(cniv1alpha1.GroupVersion.WithKind("AntreaConfig").GroupKind(), obj.Name, errs)
}
