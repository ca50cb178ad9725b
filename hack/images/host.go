package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Debian's iptables and conntrack, which kube-proxy runs in iptables mode. The image carries the
// nf_tables variants the node's host uses (Debian's default alternative), the legacy ones, and
// the extensions iptables loads at run time.
var iptablesFiles = []string{
	"/usr/sbin/iptables", "/usr/sbin/iptables-save", "/usr/sbin/iptables-restore",
	"/usr/sbin/ip6tables", "/usr/sbin/ip6tables-save", "/usr/sbin/ip6tables-restore",
	"/usr/sbin/iptables-legacy", "/usr/sbin/iptables-legacy-save", "/usr/sbin/iptables-legacy-restore",
	"/usr/sbin/ip6tables-legacy", "/usr/sbin/ip6tables-legacy-save", "/usr/sbin/ip6tables-legacy-restore",
	"/usr/sbin/conntrack",
	"/usr/lib/x86_64-linux-gnu/xtables",
}

// hostLayer is a layer of files of this host's Debian packages, each at its path with every
// symbolic link on the way to it (Debian's merged /usr, /etc/alternatives), and the shared
// libraries each executable or library needs, as ldd finds them.
func hostLayer(paths []string) (v1.Layer, error) {
	h := hostFiles{entries: map[string]tarFile{}}
	for _, p := range paths {
		if err := h.add(p); err != nil {
			return nil, fmt.Errorf("failed to add %s to the image: install the Debian package that provides it: %w", p, err)
		}
	}
	names := make([]string, 0, len(h.entries))
	for n := range h.entries {
		names = append(names, n)
	}
	// A directory's name is a prefix of its children's: sorted, each comes before what it holds.
	sort.Strings(names)
	files := make([]tarFile, 0, len(names))
	for _, n := range names {
		files = append(files, h.entries[n])
	}
	return tarLayer(files)
}

// hostFiles collects a layer's entries by their name in the image (no leading slash).
type hostFiles struct {
	entries map[string]tarFile
}

// add adds path, resolving each symbolic link on it: the link becomes an entry and its target
// is added in turn. A directory is added with everything under it.
func (h *hostFiles) add(path string) error {
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s is not absolute", path)
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for i := range parts {
		prefix := "/" + strings.Join(parts[:i+1], "/")
		name := strings.TrimPrefix(prefix, "/")
		info, err := os.Lstat(prefix)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(prefix)
			if err != nil {
				return err
			}
			h.entries[name] = tarFile{name: name, mode: 0o777, link: target}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(prefix), target)
			}
			return h.add(filepath.Join(append([]string{target}, parts[i+1:]...)...))
		case info.IsDir():
			h.entries[name+"/"] = tarFile{name: name + "/", mode: 0o755, dir: true}
			if i < len(parts)-1 {
				continue
			}
			children, err := os.ReadDir(prefix)
			if err != nil {
				return err
			}
			for _, c := range children {
				if err := h.add(filepath.Join(prefix, c.Name())); err != nil {
					return err
				}
			}
		case info.Mode().IsRegular():
			if _, done := h.entries[name]; done {
				return nil
			}
			h.entries[name] = tarFile{name: name, mode: int64(info.Mode().Perm()), path: prefix}
			return h.addLibraries(prefix)
		default:
			return fmt.Errorf("%s is neither a file, a directory nor a link", prefix)
		}
	}
	return nil
}

// addLibraries adds the shared libraries an ELF file needs and its program interpreter.
func (h *hostFiles) addLibraries(path string) error {
	head := make([]byte, 4)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	_, err = f.Read(head)
	f.Close()
	if err != nil || !bytes.Equal(head, []byte("\x7fELF")) {
		return nil
	}
	out, err := exec.Command("ldd", path).Output()
	if err != nil {
		// ldd fails on a static executable, which needs nothing.
		return nil
	}
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		// "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)".
		fields := strings.Fields(s.Text())
		lib := ""
		switch {
		case len(fields) >= 3 && fields[1] == "=>":
			lib = fields[2]
		case len(fields) >= 1 && filepath.IsAbs(fields[0]):
			lib = fields[0]
		}
		if !filepath.IsAbs(lib) {
			continue
		}
		if err := h.add(lib); err != nil {
			return err
		}
	}
	return s.Err()
}
