package hostlimits

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// signatures are what a process logs when it meets one of the host's limits, and which limits
// those are. Go's inotify watchers (fsnotify) say "too many open files" when the user's inotify
// instances run out, as for descriptors; "no space left on device" from inotify_add_watch is the
// watches; a fork or a new thread refused with EAGAIN is the threads.
var signatures = []struct {
	text, alsoIn, limits string
}{
	{"too many open files", "", "fs.inotify.max_user_instances or open files (fs.file-max, the process's RLIMIT_NOFILE)"},
	{"no space left on device", "inotify", "fs.inotify.max_user_watches"},
	{"no space left on device", "watch", "fs.inotify.max_user_watches"},
	{"resource temporarily unavailable", "fork", "kernel.threads-max or kernel.pid_max"},
	{"resource temporarily unavailable", "thread", "kernel.threads-max or kernel.pid_max"},
	{"failed to create new os thread", "", "kernel.threads-max or kernel.pid_max"},
}

// Finding is a host limit a process met: which limits it may be, and the line that says so.
type Finding struct {
	Limits, Line string
}

// String is what a waiting command and a terminated container say: the limit, the line, and
// how to see and raise it.
func (f Finding) String() string {
	return fmt.Sprintf("host limit reached (%s): %q; `sysctl %s` shows it, and %s=true lets slipway raise it",
		f.Limits, f.Line, strings.Fields(f.Limits)[0], RaiseEnv)
}

// Explain finds, in a process's output, the last line that says it met a host limit.
func Explain(output string) (Finding, bool) {
	lines := strings.Split(output, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.ToLower(lines[i])
		for _, s := range signatures {
			if strings.Contains(line, s.text) && strings.Contains(line, s.alsoIn) {
				return Finding{Limits: s.limits, Line: strings.TrimSpace(lines[i])}, true
			}
		}
	}
	return Finding{}, false
}

// ExplainFile is Explain on the last 16 KiB of a log file.
func ExplainFile(path string) (Finding, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Finding{}, false
	}
	defer f.Close()
	const tail = 16 << 10
	if info, err := f.Stat(); err == nil && info.Size() > tail {
		if _, err := f.Seek(-tail, io.SeekEnd); err != nil {
			return Finding{}, false
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return Finding{}, false
	}
	return Explain(string(data))
}
