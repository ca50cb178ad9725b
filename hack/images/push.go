package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/slipway-dev/slipway/internal/images"
)

// pushAll pushes every image of the layout under dir to registry.
func pushAll(dir, registry string) error {
	start := time.Now()
	built, err := images.ReadLayout(filepath.Join(dir, "layout"))
	if err != nil {
		return err
	}
	pushed := 0
	for _, b := range built {
		ref, fresh, err := images.Push(context.Background(), registry, b)
		if err != nil {
			return err
		}
		if fresh {
			pushed++
			fmt.Printf("pushed %s\n", ref)
		}
	}
	fmt.Printf("pushed %d of %d images to %s (the others were there) in %s\n", pushed, len(built), registry, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// list prints each image of the layout under dir with its digest and compressed size, and the
// size of the distinct layers of all of them.
func list(dir string) error {
	built, err := images.ReadLayout(filepath.Join(dir, "layout"))
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "IMAGE\tDIGEST\tSIZE\tSTAND-IN")
	distinct := map[string]int64{}
	for _, b := range built {
		digest, err := b.Image.Digest()
		if err != nil {
			return err
		}
		layers, err := b.Image.Layers()
		if err != nil {
			return err
		}
		var size int64
		for _, l := range layers {
			n, err := l.Size()
			if err != nil {
				return err
			}
			d, err := l.Digest()
			if err != nil {
				return err
			}
			size += n
			distinct[d.String()] = n
		}
		cfg, err := b.Image.ConfigFile()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", b.Ref, digest.String()[:19], mib(size), cfg.Config.Labels[images.LabelSimulated])
	}
	var total int64
	for _, n := range distinct {
		total += n
	}
	fmt.Fprintf(w, "%d images\t\t%s in %d distinct layers\t\n", len(built), mib(total), len(distinct))
	return w.Flush()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
