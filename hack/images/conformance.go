package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// conformanceDir is the module that builds Kubernetes' end-to-end suite and its test images'
// Go programs (agnhost), apart from the images slipway ships.
const conformanceDir = "hack/tools/conformance"

// agnhostVersion is the agnhost Kubernetes v1.35.4's suite names (test/utils/image/manifest.go).
const agnhostVersion = "2.59"

// agnhostPrevious is the older agnhost the suite names (AgnhostPrev).
const agnhostPrevious = "2.55"

// e2eRegistry is where the suite's images are named (its "promoter e2e registry"); real nodes
// pull registry.k8s.io through the local registry.
const e2eRegistry = "registry.k8s.io/e2e-test-images/"

// busyboxLinks are the links to /bin/busybox, one for each of its applets, that busybox's own
// image has in /bin; Debian's busybox-static is the binary.
func busyboxLinks() ([]tarFile, error) {
	out, err := exec.Command("/bin/busybox", "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("the conformance images need Debian's busybox-static (/bin/busybox --list): %w", err)
	}
	files := []tarFile{{name: "bin/", mode: 0o755, dir: true}}
	for _, applet := range strings.Fields(string(out)) {
		if applet != "busybox" {
			files = append(files, tarFile{name: "bin/" + applet, link: "busybox"})
		}
	}
	return files, nil
}

// conformanceSpecs are the images of Kubernetes v1.35.4's conformance tests that can be made
// here, named as the suite names them: agnhost (built from its source in k8s.io/kubernetes, on
// busybox's applets with Debian's bash as its shell and Debian's dig, curl and OpenBSD nc, as
// upstream's is on Alpine's busybox, bind-tools, curl and netcat-openbsd), busybox (Debian's 1.35, where the suite names 1.37),
// nonroot, kitten and nautilus (agnhost's test-webserver serving their pages), and pause.
// nginx, jessie-dnsutils, nonewprivs, sample-apiserver and etcd's test image are not made: the
// tests that run them fail to pull, and the report names them.
func conformanceSpecs(root string) ([]spec, error) {
	links, err := busyboxLinks()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	list := exec.Command("go", "list", "-C", filepath.Join(root, conformanceDir), "-m", "-f", "{{.Dir}}", kubernetesModule)
	list.Stderr = &stderr
	k8sDir, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("failed to find %s's source from %s: %w: %s", kubernetesModule, conformanceDir, err, strings.TrimSpace(stderr.String()))
	}
	busyboxVersion, err := exec.Command("dpkg-query", "-W", "-f", "${Version}", "busybox-static").Output()
	if err != nil {
		return nil, fmt.Errorf("the conformance images need Debian's busybox-static (dpkg-query -W busybox-static): %w", err)
	}
	images := filepath.Join(strings.TrimSpace(string(k8sDir)), "test", "images")
	busybox := binary{name: "busybox", file: "bin/busybox", prebuilt: "/bin/busybox", source: "debian:busybox-static", version: string(busyboxVersion)}
	agnhost := binary{name: "agnhost-" + agnhostVersion, file: "agnhost", dir: conformanceDir, pkg: kubernetesModule + "/test/images/agnhost",
		source: kubernetesModule, version: agnhostVersion}
	users := passwd("user-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n")
	// agnhost's shell is Debian's bash, not busybox's: Debian builds busybox to run its own
	// applets before any program on the PATH, and its nc applet lacks the flags the suite
	// passes to OpenBSD's nc (-u, -t, -z, -w), which upstream's Alpine image runs.
	var agnhostFiles []tarFile
	for _, l := range links {
		if l.name != "bin/sh" && l.name != "bin/nc" {
			agnhostFiles = append(agnhostFiles, l)
		}
	}
	agnhostFiles = append(agnhostFiles,
		tarFile{name: "bin/sh", link: "/usr/bin/bash"},
		// OpenBSD's nc by its own name: Debian's /usr/bin/nc goes through /etc/alternatives
		// to /bin/nc.openbsd, and /bin here is busybox's directory, not a link to /usr/bin.
		tarFile{name: "usr/bin/nc", link: "nc.openbsd"},
		tarFile{name: "bin/busybox", mode: 0o755, path: "/bin/busybox"},
		tarFile{name: "etc/", mode: 0o755, dir: true},
		tarFile{name: "etc/passwd", mode: 0o644, data: []byte(users)},
		tarFile{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n")},
		tarFile{name: "uploads/", mode: 0o777, dir: true},
		tarFile{name: "localhost.crt", mode: 0o644, path: filepath.Join(images, "agnhost", "porter", "localhost.crt")},
		tarFile{name: "localhost.key", mode: 0o644, path: filepath.Join(images, "agnhost", "porter", "localhost.key")},
		tarFile{name: "agnhost-2", link: "agnhost"})
	for _, f := range agnhostFiles {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return nil, fmt.Errorf("agnhost's image needs %s: %w", f.path, err)
		}
	}
	// The tests run dig, curl and OpenBSD's nc (-t, -u, -z, -w) in agnhost's pods, from its shell.
	var netTools []string
	for _, tool := range []string{"/usr/bin/dig", "/usr/bin/curl", "/usr/bin/nc.openbsd", "/usr/bin/bash"} {
		if _, err := os.Stat(tool); err != nil {
			return nil, fmt.Errorf("agnhost's image carries %s, as upstream's does, for the DNS and network tests: install Debian's bind9-dnsutils, curl, netcat-openbsd and bash: %w", tool, err)
		}
		netTools = append(netTools, tool)
	}
	webserver := func(name string) spec {
		html := filepath.Join(images, name, "html")
		files := append(slices.Clone(agnhostFiles),
			tarFile{name: name + ".jpg", mode: 0o644, path: filepath.Join(html, name+".jpg")},
			tarFile{name: "data.json", mode: 0o644, path: filepath.Join(html, "data.json")})
		return spec{ref: e2eRegistry + name + ":1.7", bin: agnhost, root: true, host: netTools, files: files, cmd: []string{"test-webserver"},
			title: name + " 1.7: agnhost " + agnhostVersion + "'s test-webserver serving its page"}
	}
	return []spec{
		{ref: e2eRegistry + "agnhost:" + agnhostVersion, bin: agnhost, root: true, host: netTools, files: agnhostFiles, cmd: []string{"pause"},
			title: "agnhost " + agnhostVersion + " on busybox's applets with Debian's bash, dig, curl and nc"},
		// The suite's previous agnhost, which its rollout tests change an image to and from: the
		// same program (2.55's source is not in v1.35.4's module), an image of its own.
		{ref: e2eRegistry + "agnhost:" + agnhostPrevious, bin: agnhost, root: true, host: netTools, files: agnhostFiles, cmd: []string{"pause"},
			title: "agnhost " + agnhostVersion + "'s program as the suite's previous agnhost, " + agnhostPrevious},
		{ref: e2eRegistry + "busybox:1.37.0-1", bin: busybox, root: true, bare: true, files: links, cmd: []string{"sh"},
			title: "Debian's busybox-static " + string(busyboxVersion) + " as the suite's busybox 1.37"},
		{ref: e2eRegistry + "nonroot:1.4", bin: busybox, user: "1234", bare: true, files: links, cmd: []string{"sh"},
			title: "busybox run as user 1234, as the nonroot test image"},
		webserver("kitten"),
		webserver("nautilus"),
		// The suite runs pause as a container of its own, by upstream's name.
		{ref: "registry.k8s.io/pause:3.10.1", root: true, bin: binary{name: "pause", file: "pause", dir: ".", pkg: "./hack/images/pause", source: slipwayModule},
			title: "pause (slipway's, as Kubernetes' build/pause)"},
	}, nil
}
