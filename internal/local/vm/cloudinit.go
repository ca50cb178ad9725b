package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// cloudConfig is the part of cloud-init's #cloud-config that Cluster API's kubeadm bootstrap
// provider writes: files, then commands.
type cloudConfig struct {
	WriteFiles []writeFile `json:"write_files"`
	// BootCmd and RunCmd entries are a shell command (a string) or an argument list.
	BootCmd []any `json:"bootcmd"`
	RunCmd  []any `json:"runcmd"`
}

type writeFile struct {
	Path        string `json:"path"`
	Content     string `json:"content"`
	Encoding    string `json:"encoding"`
	Permissions string `json:"permissions"`
	Owner       string `json:"owner"`
	Append      bool   `json:"append"`
}

// parseUserData reads cloud-init user data. Cluster API's is a Jinja template ("## template:
// jinja") whose only variable is the instance's host name, which cloud-init takes from the
// datasource's metadata: here, the node's name.
func parseUserData(data []byte, hostname string) (*cloudConfig, error) {
	text := string(data)
	if strings.HasPrefix(text, "## template: jinja") {
		text = text[strings.Index(text, "\n")+1:]
		for _, v := range []string{"{{ ds.meta_data.local_hostname }}", "{{ v1.local_hostname }}", "{{ ds.meta_data.hostname }}"} {
			text = strings.ReplaceAll(text, v, hostname)
		}
	}
	if !strings.HasPrefix(text, "#cloud-config") {
		return nil, fmt.Errorf("the node's user data is not #cloud-config (it begins %q)", firstLine(text))
	}
	var c cloudConfig
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		return nil, fmt.Errorf("the node's cloud-config is not valid YAML: %w", err)
	}
	return &c, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// run executes the cloud-config as cloud-init does at a first boot: bootcmd, write_files, then
// runcmd, stopping at the first command that fails. Output goes to out, as cloud-init's goes to
// /var/log/cloud-init-output.log.
func (c *cloudConfig) run(ctx context.Context, env []string, out io.Writer) error {
	if err := runCommands(ctx, "bootcmd", c.BootCmd, env, out); err != nil {
		return err
	}
	for _, f := range c.WriteFiles {
		if err := f.write(); err != nil {
			return fmt.Errorf("write_files: %s: %w", f.Path, err)
		}
		fmt.Fprintf(out, "cloud-init: wrote %s\n", f.Path)
	}
	return runCommands(ctx, "runcmd", c.RunCmd, env, out)
}

func runCommands(ctx context.Context, section string, cmds []any, env []string, out io.Writer) error {
	for i, c := range cmds {
		var cmd *exec.Cmd
		switch v := c.(type) {
		case string:
			cmd = exec.CommandContext(ctx, "/bin/sh", "-c", v)
		case []any:
			args := make([]string, len(v))
			for j, a := range v {
				args[j] = fmt.Sprint(a)
			}
			if len(args) == 0 {
				continue
			}
			cmd = exec.CommandContext(ctx, args[0], args[1:]...)
		default:
			return fmt.Errorf("%s[%d] is %T, not a command", section, i, c)
		}
		cmd.Env, cmd.Stdout, cmd.Stderr = env, out, out
		fmt.Fprintf(out, "cloud-init: %s[%d]: %s\n", section, i, strings.Join(cmd.Args, " "))
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s[%d] (%s) failed: %w", section, i, strings.Join(cmd.Args, " "), err)
		}
	}
	return nil
}

// write writes one file of write_files, decoding it and setting its mode and owner.
func (f writeFile) write() error {
	content := []byte(f.Content)
	var err error
	switch f.Encoding {
	case "", "text/plain":
	case "b64", "base64":
		content, err = base64.StdEncoding.DecodeString(f.Content)
	case "gz", "gzip":
		content, err = gunzip(content)
	case "gz+b64", "gzip+base64", "gz+base64", "gzip+b64":
		if content, err = base64.StdEncoding.DecodeString(f.Content); err == nil {
			content, err = gunzip(content)
		}
	default:
		return fmt.Errorf("unknown encoding %q", f.Encoding)
	}
	if err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if f.Permissions != "" {
		m, err := strconv.ParseUint(f.Permissions, 8, 32)
		if err != nil {
			return fmt.Errorf("permissions %q are not octal: %w", f.Permissions, err)
		}
		mode = os.FileMode(m)
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return err
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if f.Append {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	file, err := os.OpenFile(f.Path, flags, mode)
	if err != nil {
		return err
	}
	if _, err := file.Write(content); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	// Every owner Cluster API writes is root:root, which the node's processes are.
	return os.Chmod(f.Path, mode)
}

func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
