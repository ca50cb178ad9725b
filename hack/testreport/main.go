// Command testreport reads `go test -json` on stdin and prints what `go test` prints without -v
// (each package's result, a failing test's whole output, build errors), then the tests that took
// longest, with their longest subtests: where a run's time went, in the log of every CI run.
// It exits non-zero when a package failed or when stdin held no test event.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// slow is how long a test or subtest runs before the report names it.
const slow = 20 * time.Second

type timing struct {
	name    string
	elapsed time.Duration
}

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report copies the run's results from in to out and says whether anything failed.
func report(in io.Reader, out io.Writer) (bool, error) {
	// The output of each top-level test that has not ended, kept until it fails or passes.
	pending := map[string][]string{}
	var tests []timing
	subtests := map[string][]timing{}
	failed, events := false, 0
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	for scanner.Scan() {
		line := scanner.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event: what go itself printed (a vet or setup failure).
			fmt.Fprintln(out, string(line))
			continue
		}
		events++
		top, _, _ := strings.Cut(e.Test, "/")
		key := e.Package + " " + top
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Action == "build-fail":
			failed = true
		case e.Test == "" && e.Action == "output":
			// A test that never ended (a panic, a timeout) ends with its package's FAIL line.
			if strings.HasPrefix(e.Output, "FAIL") {
				flush(out, pending, e.Package, true)
			}
			if e.Output != "PASS\n" && !strings.HasPrefix(e.Output, "=== ") {
				fmt.Fprint(out, e.Output)
			}
		case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
			flush(out, pending, e.Package, e.Action == "fail")
			if e.Action == "fail" {
				failed = true
			}
		case e.Action == "output":
			if !strings.HasPrefix(strings.TrimSpace(e.Output), "=== ") {
				pending[key] = append(pending[key], e.Output)
			}
		case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
			d := time.Duration(e.Elapsed * float64(time.Second))
			if e.Test != top {
				// Only a top-level test's direct subtests: the phases of an e2e test.
				if strings.Count(e.Test, "/") == 1 && d >= slow {
					subtests[key] = append(subtests[key], timing{e.Test, d})
				}
				continue
			}
			if e.Action == "fail" {
				fmt.Fprint(out, strings.Join(pending[key], ""))
			}
			delete(pending, key)
			if d >= slow {
				tests = append(tests, timing{key, d})
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return true, err
	}
	if events == 0 {
		return true, fmt.Errorf("no test event on stdin: did go test run with -json?")
	}
	printSlowest(out, tests, subtests)
	return failed, nil
}

// flush forgets the output of pkg's tests that have not ended, printing it first when print.
func flush(out io.Writer, pending map[string][]string, pkg string, print bool) {
	for k, lines := range pending {
		if strings.HasPrefix(k, pkg+" ") {
			if print {
				fmt.Fprint(out, strings.Join(lines, ""))
			}
			delete(pending, k)
		}
	}
}

// printSlowest prints the tests that took at least slow, longest first, each with its subtests
// that did.
func printSlowest(out io.Writer, tests []timing, subtests map[string][]timing) {
	if len(tests) == 0 {
		return
	}
	sort.Slice(tests, func(i, j int) bool { return tests[i].elapsed > tests[j].elapsed })
	fmt.Fprintf(out, "=== tests that took %s or more\n", slow)
	for _, t := range tests {
		pkg, name, _ := strings.Cut(t.name, " ")
		fmt.Fprintf(out, "%7.1fs  %s  (%s)\n", t.elapsed.Seconds(), name, pkg)
		subs := subtests[t.name]
		sort.Slice(subs, func(i, j int) bool { return subs[i].elapsed > subs[j].elapsed })
		for _, s := range subs {
			fmt.Fprintf(out, "%7.1fs    %s\n", s.elapsed.Seconds(), strings.TrimPrefix(s.name, name+"/"))
		}
	}
}
