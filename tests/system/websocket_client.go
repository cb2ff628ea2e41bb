// examples/websocket to its contract, from Go with gorilla/websocket (Debian:
// golang-github-gorilla-websocket-dev): text and binary echoed with their type, a message that
// gorilla sends in frames of its 4 KiB write buffer, 1 MiB and 16 MiB messages whole, a ping's
// pong with its payload, two clients on /chat hearing each other, and a close the client
// starts ending with its code echoed. Prints "ok: ..." for each check; exits 1 at the first
// that fails. Built against the Debian package without modules (websocket_clients_test.py:
// GO111MODULE=off, GOPATH=/usr/share/gocode). Usage: websocket_client PORT
package main

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

const big = 16 * 1024 * 1024

var port string

func check(condition bool, what string) {
	if !condition {
		fmt.Println("FAILED: " + what)
		os.Exit(1)
	}
	fmt.Println("ok: " + what)
}

func must(err error, what string) {
	if err != nil {
		check(false, what+": "+err.Error())
	}
}

func connect(path string) *websocket.Conn {
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second, WriteBufferSize: 4096}
	c, _, err := dialer.Dial("ws://127.0.0.1:"+port+path, nil)
	must(err, "connect to "+path)
	c.SetReadLimit(big + 1)
	must(c.SetReadDeadline(time.Now().Add(60*time.Second)), "read deadline")
	return c
}

func read(c *websocket.Conn) (int, []byte) {
	kind, data, err := c.ReadMessage()
	must(err, "read a message")
	return kind, data
}

// One message written through NextWriter in pieces: gorilla sends a frame each time its 4 KiB
// buffer fills (fin clear), and the last with fin set.
func sendInFrames(c *websocket.Conn, kind int, pieces ...[]byte) {
	w, err := c.NextWriter(kind)
	must(err, "start a message")
	for _, p := range pieces {
		_, err = w.Write(p)
		must(err, "write a piece")
	}
	must(w.Close(), "end the message")
}

func echo() {
	c := connect("/echo")
	must(c.WriteMessage(websocket.TextMessage, []byte("héllo, wörld")), "send text")
	kind, data := read(c)
	check(kind == websocket.TextMessage && string(data) == "héllo, wörld", "a text message comes back as text")
	must(c.WriteMessage(websocket.BinaryMessage, []byte{0, 1, 2, 255}), "send binary")
	kind, data = read(c)
	check(kind == websocket.BinaryMessage && bytes.Equal(data, []byte{0, 1, 2, 255}), "a binary message comes back as binary")
	long := strings.Repeat("fragmented ✓ ", 1000) // 15,000 bytes: four frames
	sendInFrames(c, websocket.TextMessage, []byte(long[:5000]), []byte(long[5000:]))
	kind, data = read(c)
	check(kind == websocket.TextMessage && string(data) == long, "a message sent in 4 KiB frames comes back whole")
	for _, size := range []int{1024 * 1024, big} {
		payload := make([]byte, size)
		_, err := rand.Read(payload)
		must(err, "random bytes")
		must(c.WriteMessage(websocket.BinaryMessage, payload), "send a large message")
		kind, data = read(c)
		check(kind == websocket.BinaryMessage && bytes.Equal(data, payload), fmt.Sprintf("a %d-byte message comes back whole", size))
	}
	pong := ""
	c.SetPongHandler(func(payload string) error { pong = payload; return nil })
	must(c.WriteControl(websocket.PingMessage, []byte("are you there"), time.Now().Add(10*time.Second)), "send a ping")
	must(c.WriteMessage(websocket.TextMessage, []byte("after the ping")), "send text")
	read(c) // the pong came before this echo, and its handler ran while reading
	check(pong == "are you there", "a ping is answered with a pong carrying its payload")
	must(c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(4000, "done here")), "send a close")
	_, _, err := c.ReadMessage()
	var closed *websocket.CloseError
	check(errors.As(err, &closed) && closed.Code == 4000, fmt.Sprintf("a close the client starts: the server echoes its code (%v)", err))
	c.Close()
}

// Each client says it joined and waits to hear itself: then the server has it in the room
// (its on_open ran before its message was read), and clients already there hear it too.
func join(name string, others ...*websocket.Conn) *websocket.Conn {
	c := connect("/chat")
	must(c.WriteMessage(websocket.TextMessage, []byte(name+" joined")), "say joined")
	for _, each := range append([]*websocket.Conn{c}, others...) {
		kind, data := read(each)
		check(kind == websocket.TextMessage && string(data) == name+" joined", name+" joined: heard on /chat")
	}
	return c
}

func chat() {
	a := join("a")
	b := join("b", a)
	must(b.WriteMessage(websocket.BinaryMessage, []byte("binary is ignored")), "send binary")
	must(a.WriteMessage(websocket.TextMessage, []byte("hello from a")), "send text")
	for _, each := range []*websocket.Conn{a, b} {
		kind, data := read(each)
		check(kind == websocket.TextMessage && string(data) == "hello from a", "every client in the room hears a, not b's binary")
	}
	must(a.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")), "send a close")
	_, _, err := a.ReadMessage()
	check(websocket.IsCloseError(err, websocket.CloseNormalClosure), fmt.Sprintf("a close with 1000 is echoed with 1000 (%v)", err))
	a.Close()
	b.Close()
}

func main() {
	if len(os.Args) != 2 {
		fmt.Println("usage: websocket_client PORT")
		os.Exit(2)
	}
	port = os.Args[1]
	echo()
	chat()
	fmt.Println("go gorilla/websocket: passed")
}
