#!/usr/bin/env bash
# Launch the nginx peer: env PORT (8080), WORKERS (1) -> worker_processes.
# Writes its config under $PEERS_BUILD/run/nginx-$PORT and execs nginx in the
# foreground (the PID stays the master; workers are its children).
set -euo pipefail
HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
PEERS_BUILD="${PEERS_BUILD:-$HERE/../../../../build/bench/peers}"
PORT="${PORT:-8080}"
WORKERS="${WORKERS:-1}"
RUNDIR="$PEERS_BUILD/run/nginx-$PORT"
mkdir -p "$RUNDIR"/{body,proxy,fastcgi,uwsgi,scgi}
sed -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|$WORKERS|g" -e "s|@RUNDIR@|$RUNDIR|g" \
    "$HERE/nginx.conf.in" > "$RUNDIR/nginx.conf"
exec nginx -p "$RUNDIR" -c "$RUNDIR/nginx.conf" -e stderr
