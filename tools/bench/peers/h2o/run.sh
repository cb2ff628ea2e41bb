#!/usr/bin/env bash
# Launch the h2o peer: env PORT (8080), WORKERS (1) -> num-threads.
# Writes its config under $PEERS_BUILD/run/h2o-$PORT and execs h2o in the
# foreground.  Static bodies live in $PEERS_BUILD/share/h2o (made by install.sh).
set -euo pipefail
HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
PEERS_BUILD="${PEERS_BUILD:-$HERE/../../../../build/bench/peers}"
PORT="${PORT:-8080}"
WORKERS="${WORKERS:-1}"
RUNDIR="$PEERS_BUILD/run/h2o-$PORT"
STATIC="$PEERS_BUILD/share/h2o"
mkdir -p "$RUNDIR"
sed -e "s|@PORT@|$PORT|g" -e "s|@WORKERS@|$WORKERS|g" -e "s|@RUNDIR@|$RUNDIR|g" \
    -e "s|@STATIC@|$STATIC|g" "$HERE/h2o.conf.in" > "$RUNDIR/h2o.conf"
exec h2o -c "$RUNDIR/h2o.conf"
