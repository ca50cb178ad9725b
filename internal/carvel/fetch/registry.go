package fetch

import (
	"archive/tar"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/slipway-dev/slipway/internal/carvel/bundle"
)

// maxFileSize bounds one file read from an image.
const maxFileSize = 64 << 20

// Registry is how a registry is reached: the credentials and the HTTP transport, which carries
// the CA certificates and unverified hosts of TKG's configuration (registrytrust); nil is
// go-containerregistry's default, the system's CAs.
type Registry struct {
	Auth      authn.Authenticator
	Transport http.RoundTripper
}

// Anonymous reaches registries without credentials, trusting the system's CAs.
var Anonymous = Registry{Auth: authn.Anonymous}

// Options are the registry's remote options under ctx.
func (r Registry) Options(ctx context.Context) []remote.Option {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuth(cmp.Or[authn.Authenticator](r.Auth, authn.Anonymous))}
	if r.Transport != nil {
		opts = append(opts, remote.WithTransport(r.Transport))
	}
	return opts
}

// ImageFiles pulls an image (an imgpkg bundle is one) and returns its files by path.
func ImageFiles(ctx context.Context, ref string, reg Registry) (map[string][]byte, error) {
	r, err := name.ParseReference(ref, bundle.NameOptions(ref)...)
	if err != nil {
		return nil, fmt.Errorf("invalid image reference %q: %w", ref, err)
	}
	img, err := remote.Image(r, reg.Options(ctx)...)
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
func ListTags(ctx context.Context, repository string, reg Registry) ([]string, error) {
	repo, err := name.NewRepository(repository, bundle.NameOptions(repository)...)
	if err != nil {
		return nil, fmt.Errorf("invalid image repository %q: %w", repository, err)
	}
	tags, err := remote.List(repo, reg.Options(ctx)...)
	if err != nil {
		return nil, fmt.Errorf("failed to list the tags of %s: %w", repository, err)
	}
	return tags, nil
}
