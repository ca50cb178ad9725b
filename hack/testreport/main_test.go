package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	// What `go test -json` printed for three packages: one passing with a slow test and its
	// phases, one whose test failed, one that did not build.
	in := `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestSlow"}
{"Action":"output","Package":"a","Test":"TestSlow","Output":"=== RUN   TestSlow\n"}
{"Action":"output","Package":"a","Test":"TestSlow/create","Output":"    slow_test.go:9: a passing test's log\n"}
{"Action":"pass","Package":"a","Test":"TestSlow/create","Elapsed":30.5}
{"Action":"pass","Package":"a","Test":"TestSlow/create/inner","Elapsed":25}
{"Action":"pass","Package":"a","Test":"TestSlow/quick","Elapsed":1}
{"Action":"pass","Package":"a","Test":"TestSlow","Elapsed":40}
{"Action":"pass","Package":"a","Test":"TestQuick","Elapsed":0.1}
{"Action":"output","Package":"a","Output":"PASS\n"}
{"Action":"output","Package":"a","Output":"ok  \ta\t40.2s\n"}
{"Action":"pass","Package":"a","Elapsed":40.2}
{"Action":"run","Package":"b","Test":"TestBroken"}
{"Action":"output","Package":"b","Test":"TestBroken","Output":"=== RUN   TestBroken\n"}
{"Action":"output","Package":"b","Test":"TestBroken","Output":"    b_test.go:7: want 1, got 2\n"}
{"Action":"output","Package":"b","Test":"TestBroken","Output":"--- FAIL: TestBroken (0.00s)\n"}
{"Action":"fail","Package":"b","Test":"TestBroken","Elapsed":0}
{"Action":"run","Package":"b","Test":"TestPanics"}
{"Action":"output","Package":"b","Test":"TestPanics","Output":"panic: boom\n"}
{"Action":"output","Package":"b","Output":"FAIL\tb\t0.1s\n"}
{"Action":"fail","Package":"b","Elapsed":0.1}
{"ImportPath":"c","Action":"build-output","Output":"c/c.go:3:1: syntax error\n"}
{"ImportPath":"c","Action":"build-fail"}
{"Action":"output","Package":"c","Output":"FAIL\tc [build failed]\n"}
{"Action":"fail","Package":"c"}
`
	var out strings.Builder
	failed, err := report(strings.NewReader(in), &out)
	if err != nil || !failed {
		t.Fatalf("report: failed %v, err %v; want failed", failed, err)
	}
	want := "ok  \ta\t40.2s\n" +
		"    b_test.go:7: want 1, got 2\n--- FAIL: TestBroken (0.00s)\n" +
		"panic: boom\nFAIL\tb\t0.1s\n" +
		"c/c.go:3:1: syntax error\nFAIL\tc [build failed]\n" +
		"=== tests that took 20s or more\n" +
		"   40.0s  TestSlow  (a)\n" +
		"   30.5s    create\n"
	if out.String() != want {
		t.Errorf("report printed:\n%s\nwant:\n%s", out.String(), want)
	}

	// A passing run exits zero; no event at all is an error, not a pass.
	if failed, err := report(strings.NewReader(strings.SplitAfter(in, `"Elapsed":40.2}`+"\n")[0]), &out); failed || err != nil {
		t.Errorf("a passing run: failed %v, err %v", failed, err)
	}
	if _, err := report(strings.NewReader("go: no such package\n"), &out); err == nil {
		t.Error("a run without test events: want an error")
	}
}
