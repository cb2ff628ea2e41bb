#!/usr/bin/env bash
# The benchmark's install step: Debian packages, then skiff's contract_app and
# skiff_loadgen (CMake, build/bench) and every peer (build/bench/peers/bin).
# Idempotent and quick when nothing changed: a peer is rebuilt only when a
# source file is newer than its binary.  Only Debian's repositories are used
# (cargo --offline against /usr/share/cargo/registry, Go with
# GOPATH=/usr/share/gocode); nothing is written inside the source tree.
#
#   tools/bench/install.sh               # packages + everything
#   SKIP_APT=1 tools/bench/install.sh    # no package step
#   tools/bench/install.sh hyper beast   # only these peers (and skiff)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD="${BENCH_BUILD:-$ROOT/build/bench}"
PEERS="$HERE/peers"
PEERS_BUILD="${PEERS_BUILD:-$BUILD/peers}"
BIN="$PEERS_BUILD/bin"
LOG="$PEERS_BUILD/logs"
mkdir -p "$BIN" "$LOG" "$PEERS_BUILD/src" "$PEERS_BUILD/share/h2o"

PKGS=(cmake ninja-build g++ gcc make pkg-config curl python3 util-linux procps iproute2
      wrk nginx libnginx-mod-http-echo libnginx-mod-http-headers-more-filter h2o
      golang-go golang-github-valyala-fasthttp-dev golang-github-julienschmidt-httprouter-dev
      librust-hyper-dev librust-tokio-dev librust-socket2-dev libcpp-httplib-dev libboost-dev)

install_packages() {
  local missing=() p
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  # cargo/rustc: whichever is on PATH (rustup or Debian's); else Debian's.
  command -v cargo >/dev/null 2>&1 || missing+=(cargo rustc)
  if ((${#missing[@]} == 0)); then echo "[install] packages present"; return 0; fi
  echo "[install] apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 update -qq &&
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" || return 1
  # The packages may start nginx/h2o services on :80; the benchmark never uses
  # them and they would take CPU time, so stop them.
  if command -v service >/dev/null 2>&1; then
    service nginx stop >/dev/null 2>&1 || true
    service h2o stop >/dev/null 2>&1 || true
  fi
}

# stale OUT SRC...: true when OUT is missing or older than any SRC file.
stale() {
  local out=$1; shift
  [[ -e "$out" ]] || return 0
  [[ -n "$(find "$@" -newer "$out" -type f 2>/dev/null | head -1)" ]]
}

b_skiff() {
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKIFF_BUILD_TESTS=OFF &&
  cmake --build "$BUILD" --target contract_app skiff_loadgen
}

b_floor() {
  stale "$BIN/floor" "$PEERS/floor" || return 0
  gcc -O2 -Wall -Wextra -o "$BIN/floor" "$PEERS/floor/floor.c"
}

b_hyper() {
  stale "$BIN/hyper" "$PEERS/hyper" || return 0
  # Built from a copy, so Cargo.lock and target/ never land in the source tree.
  rm -rf "$PEERS_BUILD/src/hyper" && cp -a "$PEERS/hyper" "$PEERS_BUILD/src/hyper" &&
  (cd "$PEERS_BUILD/src/hyper" && cargo --version && rustc --version &&
   CARGO_TARGET_DIR="$PEERS_BUILD/target" cargo build --release --offline) &&
  install -m755 "$PEERS_BUILD/target/release/peer-hyper" "$BIN/hyper"
}

go_build() {  # source folder, output
  stale "$2" "$1" || return 0
  (cd "$1" && go version &&
   GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS= GOCACHE="$PEERS_BUILD/go-cache" \
     go build -trimpath -o "$2" .)
}
b_fasthttp() { go_build "$PEERS/go-fasthttp" "$BIN/fasthttp"; }
b_nethttp() { go_build "$PEERS/go-nethttp" "$BIN/nethttp"; }

b_httplib() {
  stale "$BIN/httplib" "$PEERS/httplib" || return 0
  # Debian ships cpp-httplib split (header + libcpp-httplib.so): pkg-config
  # keeps the ABI-relevant -DCPPHTTPLIB_* defines in step with the library.
  # shellcheck disable=SC2046
  g++ -std=c++17 -O2 -DNDEBUG -o "$BIN/httplib" "$PEERS/httplib/main.cpp" \
      $(pkg-config --cflags --libs cpp-httplib) -pthread
}

b_beast() {
  stale "$BIN/beast" "$PEERS/beast" || return 0
  g++ -std=c++17 -O2 -DNDEBUG -o "$BIN/beast" "$PEERS/beast/main.cpp" -pthread
}

b_nginx() {
  nginx -v && ln -sfn "$PEERS/nginx/run.sh" "$BIN/nginx"
}

b_h2o() {
  h2o -v | head -1 &&
  printf 'Hello, World!' >"$PEERS_BUILD/share/h2o/index.txt" &&
  printf '{"message":"Hello, World!"}' >"$PEERS_BUILD/share/h2o/json" &&
  printf 'Not Found\n' >"$PEERS_BUILD/share/h2o/404.txt" &&
  ln -sfn "$PEERS/h2o/run.sh" "$BIN/h2o"
}

declare -A RESULT
step() {  # name: runs b_name, output to the log
  echo "[install] $1"
  if "b_$1" >"$LOG/install-$1.log" 2>&1; then
    RESULT[$1]=ok
  else
    RESULT[$1]="FAILED (see $LOG/install-$1.log)"
    tail -20 "$LOG/install-$1.log"
  fi
}

ALL=(floor hyper fasthttp nethttp httplib beast nginx h2o)
if [[ "${SKIP_APT:-0}" != 1 ]]; then install_packages || { echo "[install] apt-get failed" >&2; exit 1; }; fi
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=("${ALL[@]}")
rc=0
for t in skiff "${TARGETS[@]}"; do
  step "$t"
  [[ "${RESULT[$t]}" == ok ]] || rc=1
done
for t in skiff "${TARGETS[@]}"; do printf '  %-9s %s\n' "$t" "${RESULT[$t]}"; done
exit $rc
