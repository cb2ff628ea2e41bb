#!/bin/sh
# Builds the four ws_echo programs into build/bench/ws_echo/ (under the repository root; the
# directory is ignored by git). Rebuilds only what is missing unless REBUILD=1.
#   load          the load generator (load.cpp; skiff's headers for the accept key)
#   beast_echo    Boost.Beast echo server (Debian libboost-dev headers)
#   gorilla_echo  gorilla/websocket echo server (Debian golang-github-gorilla-websocket-dev, offline)
#   skiff_ws      examples/websocket.cpp (its /echo route)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out="$root/build/bench/ws_echo"
mkdir -p "$out"
CXX=${CXX:-g++}
need() { [ "${REBUILD:-0}" = 1 ] || [ ! -x "$out/$1" ]; }
if need load; then
    echo "build: load" >&2
    $CXX -std=c++17 -O2 -Wall -Wextra -I"$root/include" "$here/load.cpp" -o "$out/load"
fi
if need beast_echo; then
    echo "build: beast_echo" >&2
    $CXX -std=c++17 -O2 "$here/beast_echo.cpp" -o "$out/beast_echo" -pthread
fi
if need skiff_ws; then
    echo "build: skiff_ws" >&2
    (cd "$root" && $CXX -std=c++17 -O2 -Iinclude examples/websocket.cpp -o "$out/skiff_ws" \
        -DWEBSOCKET_WWW='"examples/www"' -pthread)
fi
if need gorilla_echo; then
    echo "build: gorilla_echo" >&2
    mkdir -p "$out/gocache"
    (cd "$here" && GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE="$out/gocache" \
        go build -o "$out/gorilla_echo" gorilla_echo.go)
fi
