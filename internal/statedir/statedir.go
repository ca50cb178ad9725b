// Package statedir finds slipway's state directory, where every command keeps what it makes: local
// clusters, management clusters' files, configuration files, logs. A leaf.
package statedir

import (
	"fmt"
	"os"
	"path/filepath"
)

// Env names the environment variable that overrides slipway's state directory.
const Env = "SLIPWAY_HOME"

// Path returns slipway's state directory: $SLIPWAY_HOME, else slipway/ in the user's config
// directory (~/.config/slipway).
func Path() (string, error) {
	if h := os.Getenv(Env); h != "" {
		return h, nil
	}
	config, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the user's config directory (set %s): %w", Env, err)
	}
	return filepath.Join(config, "slipway"), nil
}
