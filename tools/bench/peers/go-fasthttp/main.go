// Peer: Go fasthttp (Debian golang-github-valyala-fasthttp-dev).
//
// Worker model: the Go runtime with GOMAXPROCS=WORKERS; fasthttp runs one
// goroutine per connection (worker pool).  Go also has background threads
// (sysmon, GC) whose CPU is counted.  Routing is a hand-written switch.
// Build: GO111MODULE=off GOPATH=/usr/share/gocode go build
package main

import (
	"bytes"
	"log"
	"os"
	"runtime"
	"strconv"

	"github.com/valyala/fasthttp"
)

var (
	hello   = []byte("Hello, World!")
	jsonMsg = []byte(`{"message":"Hello, World!"}`)
	userPfx = []byte("/user/")
	notFound = []byte("Not Found\n")
)

func handler(ctx *fasthttp.RequestCtx) {
	path := ctx.Path()
	if ctx.IsGet() {
		switch string(path) {
		case "/":
			ctx.SetContentType("text/plain")
			ctx.SetBody(hello)
			return
		case "/json":
			ctx.SetContentType("application/json")
			ctx.SetBody(jsonMsg)
			return
		}
		if bytes.HasPrefix(path, userPfx) {
			id := path[len(userPfx):]
			if len(id) > 0 && bytes.IndexByte(id, '/') < 0 {
				ctx.SetContentType("text/plain")
				ctx.SetBody(id)
				return
			}
		}
	} else if ctx.IsPost() && string(path) == "/echo" {
		ct := ctx.Request.Header.ContentType()
		if len(ct) == 0 {
			ctx.SetContentType("application/octet-stream")
		} else {
			ctx.Response.Header.SetContentTypeBytes(ct)
		}
		ctx.SetBody(ctx.PostBody())
		return
	}
	// The contract's 404, byte for byte the same on every server (skiff's own).
	ctx.SetStatusCode(fasthttp.StatusNotFound)
	ctx.SetContentType("text/plain")
	ctx.SetBody(notFound)
}

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
	addr := "127.0.0.1:" + strconv.Itoa(port)
	s := &fasthttp.Server{Handler: handler, Name: "fasthttp"}
	log.Printf("fasthttp: listening on %s (GOMAXPROCS=%d)", addr, workers)
	log.Fatal(s.ListenAndServe(addr))
}
