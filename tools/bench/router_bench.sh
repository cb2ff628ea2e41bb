#!/usr/bin/env bash
# skiff's router_bench beside Go's httprouter (../shared/peers/router-bench) in one session:
# both pinned to one CPU, alternating which goes first, for ROUNDS rounds; router_bench.md
# has the method and the last figures.
#   tools/bench/router_bench.sh <build>/tools/bench/router_bench [ROUNDS]     (env CPU=1)
# Needs: apt-get install golang-go golang-github-julienschmidt-httprouter-dev
#
# Each round measures the GitHub set twice per router:
#  - wall time per iteration: Go's own ns/op (-benchtime 2s) and router_bench's median;
#  - CPU time per iteration, which a busy shared machine does not inflate: Go's process CPU
#    time (user + sys, from bash's `time`) for ITERS iterations less that for one, divided
#    by ITERS; router_bench --cpu (the thread's CPU clock).
set -euo pipefail
skiff_bench=$(realpath "$1")
rounds=${2:-5}
cpu=${CPU:-1}
iters=${ITERS:-100000}
here=$(cd "$(dirname "$0")/../.." && pwd)
peer=$here/../shared/peers/router-bench
routes=$(realpath "$here/../shared/data/github_routes.txt")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/ghb"
cp "$peer/main_test.go" "$work/src/ghb/"
(cd "$work/src/ghb" && GO111MODULE=off GOPATH="$work:/usr/share/gocode" GOCACHE="$work/cache" \
  go test -c -o "$work/ghb.test")
export ROUTES=$routes

go_wall() {  # prints Go's ns/op for BenchmarkLookupGithubAll; its lines go to stderr
  local out
  out=$(taskset -c "$cpu" "$work/ghb.test" -test.run '^$' -test.bench . -test.benchtime 2s -test.count 1 |
    grep '^Benchmark')
  echo "$out" >&2
  awk '/LookupGithubAll/ {print $3}' <<<"$out"
}
cpu_seconds() {  # user + sys seconds of one run of the Go lookup benchmark for $1 iterations
  local t
  t=$({ TIMEFORMAT='%3U %3S'; time taskset -c "$cpu" "$work/ghb.test" -test.run '^$' \
        -test.bench '^BenchmarkLookupGithubAll$' -test.benchtime "$1x" >/dev/null; } 2>&1)
  awk '{print $1 + $2}' <<<"$t"
}
go_cpu() {  # Go's CPU ns per iteration
  local one many
  one=$(cpu_seconds 1)
  many=$(cpu_seconds "$iters")
  awk -v a="$one" -v b="$many" -v n="$iters" 'BEGIN {printf "%.0f\n", (b - a) * 1e9 / (n - 1)}'
}
skiff_median() {  # router_bench's median ns per iteration for the GitHub lookups ($1: --cpu or "")
  local out
  out=$(taskset -c "$cpu" "$skiff_bench" "$routes" --reps 7 --ms 100 $1)
  echo "$out" >&2
  awk '$1 == "github-203" && $2 == "lookup" {print $4}' <<<"$out"
}

echo "== $(date -u +%F) $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs, pinned to CPU $cpu, $(go version | cut -d' ' -f3)"
declare -a gw gc sw sc
for ((r = 0; r < rounds; r++)); do
  echo "== round $((r + 1)), load $(cut -d' ' -f1 /proc/loadavg)" >&2
  if ((r % 2 == 0)); then
    gw[r]=$(go_wall); gc[r]=$(go_cpu); sw[r]=$(skiff_median ""); sc[r]=$(skiff_median --cpu)
  else
    sw[r]=$(skiff_median ""); sc[r]=$(skiff_median --cpu); gw[r]=$(go_wall); gc[r]=$(go_cpu)
  fi
done

echo "== GitHub set, all 203 routes looked up once per iteration: ns per iteration per round"
printf '%-6s %14s %14s %8s %14s %14s %8s\n' round "httprouter wall" "skiff wall" ratio "httprouter cpu" "skiff cpu" ratio
for ((r = 0; r < rounds; r++)); do
  awk -v r=$((r + 1)) -v a="${gw[r]}" -v b="${sw[r]}" -v c="${gc[r]}" -v d="${sc[r]}" \
    'BEGIN {printf "%-6s %14.0f %14.0f %8.3f %14.0f %14.0f %8.3f\n", r, a, b, b / a, c, d, d / c}'
done
