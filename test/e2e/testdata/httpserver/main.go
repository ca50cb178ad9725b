// Command httpserver is the application the real-nodes e2e test runs on a workload cluster: it
// answers GET / with the pod's name and node, GET /data with the content of $DATA_DIR/data, and
// PUT /data by writing it there (a PersistentVolume's mount), logging a line per request.
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

func main() {
	pod, node, dir := os.Getenv("POD_NAME"), os.Getenv("NODE_NAME"), os.Getenv("DATA_DIR")
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		fmt.Fprintf(w, "pod=%s node=%s\n", pod, node)
	})
	http.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		log.Printf("%s %s from %s", r.Method, r.URL.Path, r.RemoteAddr)
		path := filepath.Join(dir, "data")
		if r.Method == http.MethodPut {
			body, err := io.ReadAll(r.Body)
			if err == nil {
				err = os.WriteFile(path, body, 0o644)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
			return
		}
		data, err := os.ReadFile(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		_, _ = w.Write(data)
	})
	log.Printf("serving on :8080 as pod %s on node %s", pod, node)
	server := &http.Server{Addr: ":8080", ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(server.ListenAndServe())
}
