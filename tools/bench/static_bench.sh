#!/usr/bin/env bash
# Static files under load: one 100 MB file fetched by 50 clients at once (curl, in parallel),
# from examples/static_site (release build, one loop) and from nginx (Debian's, one worker,
# sendfile on), in one run, on loopback. For each: wall time, the server's CPU time (utime +
# stime from /proc/PID/stat, nginx's worker) per byte sent, and the ratio skiff/nginx. Then
# `strace -f -c -e trace=sendfile` on each server during one more download shows the body
# going by sendfile(2). One warm-up download from each comes before the measured rounds.
# Usage: tools/bench/static_bench.sh [CLIENTS] [MEGABYTES]   (defaults 50, 100)
# Needs: cmake, g++, curl, strace, nginx (apt-get install nginx-light strace curl).
set -euo pipefail
cd "$(dirname "$0")/../.."
clients=${1:-50}
megabytes=${2:-100}
build=build/bench-static
work=$(mktemp -d /tmp/skiff_static_bench.XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKIFF_BUILD_TESTS=OFF -DSKIFF_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target static_site >/dev/null
chmod 755 "$work"  # nginx's workers run as nobody
mkdir -p "$work/www" "$work/nginx"
head -c "$((megabytes << 20))" /dev/urandom > "$work/www/big.bin"
size=$(stat -c %s "$work/www/big.bin")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ticks() {  # utime + stime of one process, in clock ticks
  awk '{ print $14 + $15 }' "/proc/$1/stat"
}
wait_port() { for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return; sleep 0.05; done; }

skiff_port=$(free_port)
ROOT="$work/www" PORT=$skiff_port "$build/examples/static_site" >/dev/null &
skiff_pid=$!
pids+=("$skiff_pid")

nginx_port=$(free_port)
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
    uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
    server { listen 127.0.0.1:$nginx_port; root $work/www; }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -e stderr &
nginx_master=$!
pids+=("$nginx_master")
wait_port "$skiff_port"
wait_port "$nginx_port"
nginx_worker=$(pgrep -P "$nginx_master" | head -1)

# A warm-up download from each first: without it the first server measured paid for the
# machine's cold start (its wall time was 1.5-2x the other's, whichever ran first).
curl -s -o /dev/null "http://127.0.0.1:$skiff_port/big.bin"
curl -s -o /dev/null "http://127.0.0.1:$nginx_port/big.bin"

hz=$(getconf CLK_TCK)
declare -A cpu_per_gb
for server in skiff nginx; do
  if [[ $server == skiff ]]; then port=$skiff_port pid=$skiff_pid; else port=$nginx_port pid=$nginx_worker; fi
  before=$(ticks "$pid")
  start=$(date +%s.%N)
  fetchers=()
  for _ in $(seq "$clients"); do
    curl -s -o /dev/null -w '%{size_download}\n' "http://127.0.0.1:$port/big.bin" >> "$work/$server.sizes" &
    fetchers+=($!)
  done
  wait "${fetchers[@]}" || true
  end=$(date +%s.%N)
  after=$(ticks "$pid")
  whole=$(grep -c "^$size\$" "$work/$server.sizes" || true)
  bytes=$((whole * size))
  cpu=$(echo "($after - $before) / $hz" | bc -l)
  cpu_per_gb[$server]=$(echo "$cpu / ($bytes / 1000000000)" | bc -l)
  printf '%-6s %d/%d clients got %d bytes each; wall %.2f s; server CPU %.2f s; %.3f CPU s per GB\n' \
    "$server" "$whole" "$clients" "$size" "$(echo "$end - $start" | bc -l)" "$cpu" "${cpu_per_gb[$server]}"
done
printf 'CPU per byte, skiff / nginx: %.2f\n' "$(echo "${cpu_per_gb[skiff]} / ${cpu_per_gb[nginx]}" | bc -l)"

for server in skiff nginx; do
  if [[ $server == skiff ]]; then port=$skiff_port pid=$skiff_pid; else port=$nginx_port pid=$nginx_worker; fi
  strace -f -c -e trace=sendfile -p "$pid" -o "$work/$server.strace" &
  tracer=$!
  sleep 0.5
  curl -s -o /dev/null "http://127.0.0.1:$port/big.bin"
  sleep 0.2
  kill -INT "$tracer"
  wait "$tracer" 2>/dev/null || true
  echo "== strace -f -c -e trace=sendfile, $server, one $megabytes MB download:"
  cat "$work/$server.strace"
done
