package cliutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestFlagErrorNamesTheFlag(t *testing.T) {
	flags := map[string]string{"controlPlaneNodes": "--control-plane-nodes", "url": "--url"}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{field.Invalid(field.NewPath("controlPlaneNodes"), 0, "a cluster needs at least one control-plane node"),
			"--control-plane-nodes 0 is invalid: a cluster needs at least one control-plane node"},
		{fmt.Errorf("wrapped: %w", field.Required(field.NewPath("url"), "the imgpkg bundle")), "--url is required: the imgpkg bundle"},
		{field.Invalid(field.NewPath("other"), 1, "no flag"), "other: Invalid value: 1: no flag"},
		{errors.New("plain"), "plain"},
	} {
		if got := FlagError(tc.err, flags).Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
	if FlagError(nil, flags) != nil {
		t.Errorf("nil is not an error")
	}
}

// TestOpenBrowserKeepsTheTokenOutOfArguments: the browser command is given a page of the user's
// alone that sends it on to the URL, never the URL with its token; the page is gone later.
func TestOpenBrowserKeepsTheTokenOutOfArguments(t *testing.T) {
	dir := t.TempDir()
	args := filepath.Join(dir, "args")
	browser := filepath.Join(dir, "browser")
	script := "#!/bin/sh\necho \"$@\" > " + args + ".tmp && mv " + args + ".tmp " + args + "\n"
	if err := os.WriteFile(browser, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { browserReadsPage = d }(browserReadsPage)
	browserReadsPage = 2 * time.Second
	url := "http://127.0.0.1:8080/?token=0123abcd"
	if err := OpenBrowser(browser, url); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if got, err = os.ReadFile(args); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the browser command did not run within 10s")
		}
	}
	arg := strings.TrimSpace(string(got))
	if strings.Contains(arg, "token") || !strings.HasPrefix(arg, "file://") {
		t.Fatalf("the browser's argument %q: want a file:// page without the token", arg)
	}
	page := strings.TrimPrefix(arg, "file://")
	info, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	dirInfo, err := os.Stat(filepath.Dir(page))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 || dirInfo.Mode().Perm() != 0o700 {
		t.Errorf("the page %v in a directory %v: want 0600 in 0700", info.Mode(), dirInfo.Mode())
	}
	content, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(content), `http-equiv="refresh" content="0; url=`+url+`"`) {
		t.Errorf("the page does not send the browser on to %s: %v\n%s", url, err, content)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(filepath.Dir(page)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page %s is still there 10s after its time", page)
		}
	}
}
