package cluster

import (
	"github.com/slipway-dev/slipway/internal/progress"
)

// checkLocalHost asks check (nil for none) whether this host can start the control-plane
// machines and workers a Cluster of the local provider gains.
func checkLocalHost(check HostCheck, p *progress.Printer, controlPlanes, workers int) error {
	if check == nil || controlPlanes+workers == 0 {
		return nil
	}
	return check(p, controlPlanes, workers)
}
