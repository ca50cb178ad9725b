package fetch

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/controllers/packaging/bundle"
)

// maxFileSize bounds one file read from an image.
const maxFileSize = 64 << 20

// ImageFiles pulls an image (an imgpkg bundle is one) and returns its files by path.
func ImageFiles(ctx context.Context, ref string, auth authn.Authenticator) (map[string][]byte, error) {
	r, err := name.ParseReference(ref, bundle.NameOptions(ref)...)
	if err != nil {
		return nil, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	img, err := remote.Image(r, remote.WithContext(ctx), remote.WithAuth(auth))
	if err != nil {
		return nil, fmt.Errorf("failed to pull %s: %w", ref, err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", ref, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(tr, maxFileSize))
		if err != nil {
			return nil, fmt.Errorf("failed to read %s: %w", ref, err)
		}
		files[strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")] = data
	}
}

// ListTags lists the tags of an image repository such as 127.0.0.1:5000/packages/tkr-repository.
func ListTags(ctx context.Context, repository string, auth authn.Authenticator) ([]string, error) {
	repo, err := name.NewRepository(repository, bundle.NameOptions(repository)...)
	if err != nil {
		return nil, fmt.Errorf("invalid image repository %q: %w", repository, err)
	}
	tags, err := remote.List(repo, remote.WithContext(ctx), remote.WithAuth(auth))
	if err != nil {
		return nil, fmt.Errorf("failed to list the tags of %s: %w", repository, err)
	}
	return tags, nil
}
