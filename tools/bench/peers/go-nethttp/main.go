// Peer: Go net/http + julienschmidt/httprouter (both from Debian).
//
// Worker model: the Go runtime with GOMAXPROCS=WORKERS; net/http runs one
// goroutine per connection.  Go also has background threads (sysmon, GC)
// whose CPU is counted.  net/http serves pipelined requests one at a time and
// flushes after each response.
// Build: GO111MODULE=off GOPATH=/usr/share/gocode go build
package main

import (
	"io"
	"log"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"
)

var (
	hello   = []byte("Hello, World!")
	jsonMsg = []byte(`{"message":"Hello, World!"}`)
)

func env(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func main() {
	port := env("PORT", 8080)
	workers := env("WORKERS", 1)
	runtime.GOMAXPROCS(workers)

	r := httprouter.New()
	r.HandleMethodNotAllowed = false // contract: anything unmatched is 404
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	// The contract's 404, byte for byte the same on every server (skiff's own).
	r.NotFound = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = []string{"text/plain"}
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "Not Found\n")
	})
	r.GET("/", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Header()["Content-Type"] = []string{"text/plain"}
		w.Write(hello)
	})
	r.GET("/json", func(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
		w.Header()["Content-Type"] = []string{"application/json"}
		w.Write(jsonMsg)
	})
	r.GET("/user/:id", func(w http.ResponseWriter, _ *http.Request, ps httprouter.Params) {
		w.Header()["Content-Type"] = []string{"text/plain"}
		io.WriteString(w, ps.ByName("id"))
	})
	r.POST("/echo", func(w http.ResponseWriter, req *http.Request, _ httprouter.Params) {
		ct := req.Header.Get("Content-Type")
		if strings.TrimSpace(ct) == "" {
			ct = "application/octet-stream"
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.Header()["Content-Type"] = []string{ct}
		w.Header()["Content-Length"] = []string{strconv.Itoa(len(body))}
		w.Write(body)
	})

	addr := "127.0.0.1:" + strconv.Itoa(port)
	log.Printf("net/http+httprouter: listening on %s (GOMAXPROCS=%d)", addr, workers)
	log.Fatal(http.ListenAndServe(addr, r))
}
