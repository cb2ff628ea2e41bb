// ws_echo peer: a WebSocket echo server on gorilla/websocket (Debian's
// golang-github-gorilla-websocket-dev), for ws_echo_bench.py.
//
// net/http serves the upgrade at /echo; one goroutine per connection reads each complete
// message and writes it back with its type (ReadMessage / WriteMessage, the package's
// documented echo idiom). No compression (the Upgrader's default). Run with GOMAXPROCS=1 so
// that Go code runs on one core, like the other servers.
//
// Env: PORT (default 8080). Prints "serving PORT" when listening.
//
// Build offline: GOPATH=/usr/share/gocode GO111MODULE=off go build -o gorilla_echo gorilla_echo.go
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/gorilla/websocket"
)

var upgrader = websocket.Upgrader{}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered with an error status
	}
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gorilla_echo: cannot listen on 127.0.0.1:%s: %v\n", port, err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", echo)
	fmt.Printf("serving %d\n", ln.Addr().(*net.TCPAddr).Port)
	if err := http.Serve(ln, mux); err != nil {
		fmt.Fprintf(os.Stderr, "gorilla_echo: %v\n", err)
		os.Exit(1)
	}
}
