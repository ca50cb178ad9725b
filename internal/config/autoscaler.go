package config

import (
	"fmt"
	"strconv"
)

// Cluster autoscaler variables, by TKG's names.
const (
	EnableAutoscaler                     = "ENABLE_AUTOSCALER"
	AutoscalerMaxNodesTotal              = "AUTOSCALER_MAX_NODES_TOTAL"
	AutoscalerScaleDownDelayAfterAdd     = "AUTOSCALER_SCALE_DOWN_DELAY_AFTER_ADD"
	AutoscalerScaleDownDelayAfterDelete  = "AUTOSCALER_SCALE_DOWN_DELAY_AFTER_DELETE"
	AutoscalerScaleDownDelayAfterFailure = "AUTOSCALER_SCALE_DOWN_DELAY_AFTER_FAILURE"
	AutoscalerScaleDownUnneededTime      = "AUTOSCALER_SCALE_DOWN_UNNEEDED_TIME"
	AutoscalerMaxNodeProvisionTime       = "AUTOSCALER_MAX_NODE_PROVISION_TIME"
)

// autoscalerSizes are the AUTOSCALER_MIN_SIZE_n and AUTOSCALER_MAX_SIZE_n of md-0, md-1, md-2.
var autoscalerSizes = func() []string {
	var names []string
	for i := range 3 {
		names = append(names, fmt.Sprintf("AUTOSCALER_MIN_SIZE_%d", i), fmt.Sprintf("AUTOSCALER_MAX_SIZE_%d", i))
	}
	return names
}()

// autoscaler checks the cluster autoscaler's variables. slipway does not deploy the autoscaler
// yet, so ENABLE_AUTOSCALER true is refused rather than ignored; the other values are checked
// all the same, so that a file that works with TKG is known to be well formed.
func (k *completer) autoscaler() {
	if k.boolean(EnableAutoscaler, k.value(EnableAutoscaler, "false")) {
		k.bad("%s true: slipway does not deploy the cluster autoscaler yet: set %s to false and scale with `slipway cluster scale`", EnableAutoscaler, EnableAutoscaler)
	}
	if value, ok := k.v.Get(AutoscalerMaxNodesTotal); ok {
		k.number(AutoscalerMaxNodesTotal, value, 0)
	}
	for _, name := range []string{AutoscalerScaleDownDelayAfterAdd, AutoscalerScaleDownDelayAfterDelete, AutoscalerScaleDownDelayAfterFailure,
		AutoscalerScaleDownUnneededTime, AutoscalerMaxNodeProvisionTime} {
		if _, ok := k.v.Get(name); ok {
			k.duration(name, "", 0)
		}
	}
	for i := 0; i < len(autoscalerSizes); i += 2 {
		minName, maxName := autoscalerSizes[i], autoscalerSizes[i+1]
		minValue, minSet := k.v.Get(minName)
		maxValue, maxSet := k.v.Get(maxName)
		var lo, hi int
		if minSet {
			lo = k.number(minName, minValue, 0)
		}
		if maxSet {
			hi = k.number(maxName, maxValue, 1)
		}
		if minSet && maxSet {
			if n, err := strconv.Atoi(minValue); err == nil && n >= 0 && lo > hi {
				k.bad("invalid %s %d and %s %d: the minimum is above the maximum", minName, lo, maxName, hi)
			}
		}
	}
}
