// Command httpserver is the application the real-nodes e2e test runs on a workload cluster: it
// answers GET / with the pod's name and node, logging a line per request.
// `httpserver get URL` is its client: it prints what URL answers (the test runs it in a pod with
// kubectl exec, to reach a Service by name through the cluster's DNS).
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "get" {
		if err := get(os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	pod, node := os.Getenv("POD_NAME"), os.Getenv("NODE_NAME")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		fmt.Fprintf(w, "pod=%s node=%s\n", pod, node)
	})
	log.Printf("serving on :8080 as pod %s on node %s", pod, node)
	server := &http.Server{Addr: ":8080", ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(server.ListenAndServe())
}

// get prints the body of url's answer; any status but 200 is an error.
func get(url string) error {
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, body)
	}
	_, err = os.Stdout.Write(body)
	return err
}
