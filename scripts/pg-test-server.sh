#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the store tests, on 127.0.0.1 and a free port.
#   scripts/pg-test-server.sh start   # prints `export PHASEO_TEST_POSTGRES_URL=...`
#   scripts/pg-test-server.sh stop    # stops it and deletes its folder
#   scripts/pg-test-server.sh halt|resume  # stops / restarts it, keeping data and port
#   scripts/pg-test-server.sh database     # creates an empty database, prints its URL
# A test that must see only its own runs (a prune of every completed run, say) opens its
# store on a database of its own, since the suites share one database across their
# concurrent tests.
# State lives in $PHASEO_PG_DIR (default /tmp/phaseo-pg-test). As root (CI), initdb and
# postgres refuse to run, so they run as the `postgres` user on a chowned folder.
set -euo pipefail
DIR="${PHASEO_PG_DIR:-/tmp/phaseo-pg-test}"
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$BIN" ]; then
  echo "pg-test-server: PostgreSQL is not installed (apt-get install -y postgresql)" >&2
  exit 1
fi
as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case "${1:-}" in
  start)
    if [ -f "$DIR/port" ] && as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
      echo "export PHASEO_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$(cat "$DIR/port")/postgres"
      exit 0
    fi
    rm -rf "$DIR" && mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
    PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    as_owner "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1 \
      || { cat "$DIR/initdb.log" >&2; exit 1; }
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $PORT -k $DIR -c fsync=off -c max_connections=200" start >/dev/null \
      || { cat "$DIR/server.log" >&2; exit 1; }
    echo "$PORT" > "$DIR/port"
    echo "export PHASEO_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:$PORT/postgres"
    ;;
  halt)
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast -w stop >/dev/null
    ;;
  resume)
    PORT="$(cat "$DIR/port")"
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
      -o "-h 127.0.0.1 -p $PORT -k $DIR -c fsync=off -c max_connections=200" start >/dev/null
    ;;
  database)
    URL="${PHASEO_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:$(cat "$DIR/port")/postgres}"
    NAME="phaseo_t_$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
    "$BIN/createdb" --maintenance-db="$URL" "$NAME"
    echo "${URL%/*}/$NAME"
    ;;
  stop)
    if [ -d "$DIR/data" ]; then
      as_owner "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$DIR"
    ;;
  *)
    echo "usage: $0 start|stop|halt|resume|database" >&2
    exit 2
    ;;
esac
