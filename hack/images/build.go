package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/slipway-dev/slipway/internal/images"
)

// nonRoot is the user every image runs as, as distroless's nonroot.
const nonRoot = 65532

// build builds the binaries the specs need, then every image into the layout under dir.
func build(root, dir string, specs []spec) error {
	start := time.Now()
	binDir := filepath.Join(dir, "bin")
	layers := map[string]v1.Layer{}
	for _, s := range specs {
		for _, b := range append([]binary{s.bin}, s.tools...) {
			if _, ok := layers[b.name]; ok {
				continue
			}
			path := b.prebuilt
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, b.prebuilt)
			}
			if b.prebuilt == "" {
				var err error
				if path, err = goBuild(root, binDir, b); err != nil {
					return err
				}
			} else if _, err := os.Stat(path); err != nil {
				return fmt.Errorf("image %s needs %s: run make assets: %w", s.ref, b.prebuilt, err)
			}
			mode := int64(0o755)
			if b.setuid {
				mode |= 0o4000
			}
			layer, err := fileLayer(path, b.entrypoint(), mode)
			if err != nil {
				return err
			}
			layers[b.name] = layer
		}
	}
	base, err := baseLayer()
	if err != nil {
		return err
	}
	hostLayers := map[string]v1.Layer{}
	for _, s := range specs {
		key := strings.Join(s.host, " ")
		if _, ok := hostLayers[key]; ok || len(s.host) == 0 {
			continue
		}
		if hostLayers[key], err = hostLayer(s.host); err != nil {
			return fmt.Errorf("image %s: %w", s.ref, err)
		}
	}
	p, err := layout.Write(filepath.Join(dir, "layout"), empty.Index)
	if err != nil {
		return err
	}
	for _, s := range specs {
		var extra []v1.Layer
		if len(s.host) > 0 {
			extra = append(extra, hostLayers[strings.Join(s.host, " ")])
		}
		if len(s.files) > 0 {
			files, err := tarLayer(s.files)
			if err != nil {
				return fmt.Errorf("image %s: %w", s.ref, err)
			}
			extra = append(extra, files)
		}
		for _, b := range s.tools {
			extra = append(extra, layers[b.name])
		}
		extra = append(extra, layers[s.bin.name])
		img, err := assemble(s, base, extra...)
		if err != nil {
			return fmt.Errorf("image %s: %w", s.ref, err)
		}
		if err := p.AppendImage(img, layout.WithAnnotations(map[string]string{images.AnnotationRefName: s.ref})); err != nil {
			return fmt.Errorf("failed to write image %s: %w", s.ref, err)
		}
	}
	fmt.Printf("built %d images into %s in %s\n", len(specs), filepath.Join(dir, "layout"), time.Since(start).Round(time.Second))
	return nil
}

// goBuild builds a static binary (CGO off, -trimpath, no debug information) for linux/amd64.
// Go's build cache makes a build of unchanged sources quick.
func goBuild(root, binDir string, b binary) (string, error) {
	out := filepath.Join(binDir, b.name)
	start := time.Now()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w "+b.ldflags, "-o", out, b.pkg)
	cmd.Dir = filepath.Join(root, b.dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("failed to build %s from %s: %w", b.pkg, b.dir, err)
	}
	fmt.Printf("built %s in %s\n", b.name, time.Since(start).Round(time.Second))
	return out, nil
}

// entrypoint is the binary's file in the image.
func (b binary) entrypoint() string {
	if b.file != "" {
		return b.file
	}
	return "manager"
}

// tarFile is one entry of a layer.
type tarFile struct {
	name string
	mode int64
	dir  bool
	data []byte
	// path, when set, is a file whose content is the entry's.
	path string
	// link, when set, makes the entry a symbolic link to it.
	link string
}

// tarLayer makes a gzip layer of the entries, owned by root with a zero time, so that the same
// content always gives the same digest.
func tarLayer(files []tarFile) (v1.Layer, error) {
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			tw := tar.NewWriter(pw)
			err := writeEntries(tw, files)
			if err == nil {
				err = tw.Close()
			}
			pw.CloseWithError(err)
		}()
		return pr, nil
	})
}

func writeEntries(tw *tar.Writer, files []tarFile) error {
	for _, f := range files {
		hdr := &tar.Header{Name: f.name, Mode: f.mode, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if f.dir || f.link != "" {
			hdr.Typeflag, hdr.Linkname = tar.TypeDir, f.link
			if f.link != "" {
				hdr.Typeflag = tar.TypeSymlink
			}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			continue
		}
		data := f.data
		if f.path != "" {
			var err error
			if data, err = os.ReadFile(f.path); err != nil {
				return err
			}
		}
		hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return nil
}

// fileLayer is a layer holding one executable at /name, of the given mode, with the
// directories above it.
func fileLayer(path, name string, mode int64) (v1.Layer, error) {
	var files []tarFile
	for i, c := range name {
		if c == '/' {
			files = append(files, tarFile{name: name[:i+1], mode: 0o755, dir: true})
		}
	}
	return tarLayer(append(files, tarFile{name: name, mode: mode, path: path}))
}

// caBundle is where Debian keeps the system's CA certificates, copied into the base layer.
const caBundle = "/etc/ssl/certs/ca-certificates.crt"

// baseLayer is what every image shares: root's and the non-root user's entries in /etc/passwd
// and /etc/group, the CA certificates, a home for the non-root user and /tmp.
func baseLayer() (v1.Layer, error) {
	certs, err := os.ReadFile(caBundle)
	if err != nil {
		return nil, fmt.Errorf("failed to read the CA certificates for the base layer (apt-get install ca-certificates): %w", err)
	}
	users := passwd("")
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonRoot)
	return tarLayer([]tarFile{
		{name: "etc/", mode: 0o755, dir: true},
		{name: "etc/passwd", mode: 0o644, data: []byte(users)},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/ssl/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/", mode: 0o755, dir: true},
		{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: bytes.Clone(certs)},
		{name: "home/", mode: 0o755, dir: true},
		{name: "home/nonroot/", mode: 0o700, dir: true},
		{name: "tmp/", mode: 0o1777, dir: true},
	})
}

// passwd is the base layer's /etc/passwd (root and the non-root user), with more entries.
func passwd(more string) string {
	return fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonRoot, nonRoot) + more
}

// assemble makes the image of a spec: the base layer, the host's files it carries and its
// binary, and a config that runs it as the non-root user with the labels that say what it is.
func assemble(s spec, base v1.Layer, layers ...v1.Layer) (v1.Image, error) {
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), append([]v1.Layer{base}, layers...)...)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.Architecture, cfg.OS = "amd64", "linux"
	cfg.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	version := s.bin.version
	if version == "" {
		version = tagOf(s.ref)
	}
	labels := map[string]string{
		images.LabelSource:  s.bin.source,
		images.LabelVersion: version,
		images.LabelTitle:   s.title,
	}
	certs := caBundle
	if s.bin.source == kappControllerModule {
		// kapp-controller adds its configuration's CAs to this bundle, which its tools then read.
		certs = kappControllerCABundle
	}
	env := []string{"PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/", "SSL_CERT_FILE=" + certs}
	if s.component != "" {
		labels[images.LabelComponent] = s.component
	}
	if s.bin == slipwayBinary {
		// slipway's binary runs the component its image names when started as /manager.
		env = append(env, images.EnvComponent+"="+s.component)
	}
	if s.simulated {
		labels[images.LabelSimulated] = "true"
		labels[images.LabelStandsInFor] = s.ref
		env = append(env, images.EnvStandsInFor+"="+s.ref)
	}
	user := fmt.Sprintf("%d:%d", nonRoot, nonRoot)
	switch {
	case s.root:
		user = "0:0"
	case s.user != "":
		user = s.user
	}
	cfg.Config = v1.Config{
		Entrypoint: []string{"/" + s.bin.entrypoint()},
		Cmd:        s.cmd,
		Env:        env,
		User:       user,
		WorkingDir: "/",
		Labels:     labels,
	}
	if s.bare {
		cfg.Config.Entrypoint = nil
	}
	return mutate.ConfigFile(img, cfg)
}

// tagOf is a reference's tag.
func tagOf(ref string) string {
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[i+1:]
	}
	return ""
}
