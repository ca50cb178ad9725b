package hostlimits

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProc is a procfs with the given kernel limits and one process of this user holding
// instances inotify instances of watchesEach watches.
func fakeProc(t *testing.T, limits map[string]string, instances, watchesEach int) string {
	t.Helper()
	proc := t.TempDir()
	files := map[string]string{
		"sys/fs/inotify/max_user_instances": "128",
		"sys/fs/inotify/max_user_watches":   "8192",
		"sys/fs/file-nr":                    "2000\t0\t1000000",
		"sys/kernel/threads-max":            "190000",
		"sys/kernel/pid_max":                "32768",
		"loadavg":                           "0.50 0.40 0.30 2/700 12345",
		"meminfo":                           "MemTotal:       25165824 kB\nMemFree:         1000000 kB\nMemAvailable:   20971520 kB\n",
		"42/status":                         fmt.Sprintf("Name:\tkubelet\nUid:\t%d\t%d\t%d\t%d\n", os.Getuid(), os.Getuid(), os.Getuid(), os.Getuid()),
	}
	for k, v := range limits {
		files[k] = v
	}
	for name, data := range files {
		path := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"42/fd", "42/fdinfo"} {
		if err := os.MkdirAll(filepath.Join(proc, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range instances + 3 {
		target := "anon_inode:inotify"
		if i >= instances {
			target = "/dev/null" // other descriptors are not counted
		}
		if err := os.Symlink(target, filepath.Join(proc, "42/fd", fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
		info := "pos:\t0\nflags:\t02004000\n" + strings.Repeat("inotify wd:1 ino:2 sdev:3 mask:4 ignored_mask:0\n", watchesEach)
		if err := os.WriteFile(filepath.Join(proc, "42/fdinfo", fmt.Sprint(i)), []byte(info), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return proc
}

func TestReadCountsThisUsersInotify(t *testing.T) {
	h := Host{Proc: fakeProc(t, nil, 5, 7)}
	limits, err := h.Read(PerNode.Nodes(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Limit{}
	for _, l := range limits {
		got[l.Name] = l
	}
	want := map[string][3]int64{
		"fs.inotify.max_user_instances": {128, 5, PerNode.ControlPlane.InotifyInstances + PerNode.Worker.InotifyInstances},
		"fs.inotify.max_user_watches":   {8192, 35, PerNode.ControlPlane.InotifyWatches + PerNode.Worker.InotifyWatches},
		"fs.file-max":                   {1000000, 2000, PerNode.ControlPlane.Files + PerNode.Worker.Files},
		"kernel.threads-max":            {190000, 700, PerNode.ControlPlane.Threads + PerNode.Worker.Threads},
		"kernel.pid_max":                {32768, 700, PerNode.ControlPlane.Threads + PerNode.Worker.Threads},
		"memory":                        {24 << 30, 4 << 30, PerNode.ControlPlane.Memory + PerNode.Worker.Memory},
	}
	for name, w := range want {
		l, ok := got[name]
		if !ok || l.Value != w[0] || l.InUse != w[1] || l.Need != w[2] {
			t.Errorf("%s: got %+v, want value %d, in use %d, need %d", name, l, w[0], w[1], w[2])
		}
		if l.Short() {
			t.Errorf("%s is short: %s", name, l)
		}
	}
}

// TestCheckRefusesWithTheFix lowers the inotify limits below what is in use and what three
// nodes need: the refusal names each limit, its value, the need and the command that raises it,
// and says how to let slipway raise them; the limits are left as they are.
func TestCheckRefusesWithTheFix(t *testing.T) {
	proc := fakeProc(t, map[string]string{"sys/fs/inotify/max_user_instances": "128", "sys/fs/inotify/max_user_watches": "1000",
		"meminfo": "MemTotal: 4194304 kB\nMemAvailable: 524288 kB\n"}, 120, 5)
	h := Host{Proc: proc}
	need := PerNode.Nodes(1, 2)
	err := h.Check(need, false, func(msg string) { t.Errorf("reported %q", msg) })
	if err == nil {
		t.Fatal("the check passed")
	}
	for _, want := range []string{
		"this host cannot start 3 more nodes",
		fmt.Sprintf("fs.inotify.max_user_instances is 128 with 120 in use, and the new nodes need about %d more: raise it with `sysctl -w fs.inotify.max_user_instances=1024` as root", need.InotifyInstances),
		fmt.Sprintf("fs.inotify.max_user_watches is 1000 with 600 in use, and the new nodes need about %d more: raise it with `sysctl -w fs.inotify.max_user_watches=524288` as root", need.InotifyWatches),
		fmt.Sprintf("memory: 0.5 GiB available, the new nodes need about %.1f GiB: delete a local cluster", float64(need.Memory)/(1<<30)),
		"set SLIPWAY_RAISE_HOST_LIMITS=true",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal lacks %q:\n%s", want, err)
		}
	}
	if strings.Contains(err.Error(), "file-max") || strings.Contains(err.Error(), "threads-max") {
		t.Errorf("the refusal names limits that are not short:\n%s", err)
	}
	if v, _ := os.ReadFile(filepath.Join(proc, "sys/fs/inotify/max_user_instances")); strings.TrimSpace(string(v)) != "128" {
		t.Errorf("the limit changed to %s", v)
	}
}

// TestCheckRaises raises the short kernel limits when allowed, and reports each.
func TestCheckRaises(t *testing.T) {
	proc := fakeProc(t, map[string]string{"sys/fs/inotify/max_user_instances": "128"}, 120, 1)
	var reports []string
	need := PerNode.Nodes(1, 2)
	if err := (Host{Proc: proc}).Check(need, true, func(msg string) { reports = append(reports, msg) }); err != nil {
		t.Fatal(err)
	}
	if v, _ := os.ReadFile(filepath.Join(proc, "sys/fs/inotify/max_user_instances")); strings.TrimSpace(string(v)) != "1024" {
		t.Errorf("max_user_instances is %s, want 1024", v)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], fmt.Sprintf("Raised fs.inotify.max_user_instances from 128 to 1024: 120 in use and the 3 new nodes need about %d more", need.InotifyInstances)) {
		t.Errorf("reports: %q", reports)
	}
	// Memory cannot be raised: the check still refuses.
	proc = fakeProc(t, map[string]string{"meminfo": "MemTotal: 4194304 kB\nMemAvailable: 524288 kB\n"}, 0, 0)
	if err := (Host{Proc: proc}).Check(PerNode.Nodes(1, 2), true, func(string) {}); err == nil || !strings.Contains(err.Error(), "memory:") ||
		strings.Contains(err.Error(), RaiseEnv) {
		t.Errorf("short of memory: %v", err)
	}
}

// TestReadsThisHost reads the real /proc and the disk of a directory that does not exist yet.
func TestReadsThisHost(t *testing.T) {
	limits, err := Host{Proc: "/proc", Store: filepath.Join(t.TempDir(), "not", "yet")}.Read(PerNode.Nodes(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(limits) != 7 {
		t.Fatalf("read %d limits: %v", len(limits), limits)
	}
	for _, l := range limits {
		if l.Value <= 0 || l.InUse < 0 {
			t.Errorf("%+v", l)
		}
		t.Logf("%s: %d, %d in use", l.Name, l.Value, l.InUse)
	}
}
