#!/usr/bin/env bash
# Fetch benchmark: CurlTransport (and optionally URLSessionTransport) against wrk,
# on the same URLs served by nginx on loopback, 16 connections / 16 requests in flight.
#
#   Benchmarks/run-fetch-bench.sh [--pages N] [--requests N] [--concurrency C]
#                                 [--duration SECONDS] [--threads T]
#                                 [--transport curl|urlsession|both]
#
# Installs nginx and wrk with apt-get when missing, starts nginx with a config of its
# own on a free loopback port serving N generated 4 KB pages, runs wrk (2 threads,
# C connections) and `forage-bench fetch` (C concurrent requests, CurlTransport with T
# event-loop threads, 2 by default like wrk's) on the same URLs,
# and prints both rates and their ratio. Builds forage-bench in release mode (set
# FORAGE_BENCH to a binary to skip the build). Target: CurlTransport ≥ 50% of wrk.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PAGES=100
REQUESTS=100000
CONCURRENCY=16
DURATION=10
TRANSPORT=curl
THREADS=2

while [ $# -gt 0 ]; do
  case "$1" in
    --pages) PAGES="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --concurrency) CONCURRENCY="$2"; shift 2 ;;
    --duration) DURATION="$2"; shift 2 ;;
    --transport) TRANSPORT="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run-fetch-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v wrk >/dev/null 2>&1 || need+=(wrk)
if [ ${#need[@]} -gt 0 ]; then
  echo "installing ${need[*]}…" >&2
  apt-get update -qq >&2 && apt-get install -y -qq "${need[@]}" >&2
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"

WORK="$(mktemp -d)"
NGINX_PID=""
cleanup() {
  if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
mkdir -p "$WORK/html" "$WORK/logs"
chmod 755 "$WORK"  # nginx workers run as an unprivileged user
python3 - "$WORK/html" "$PAGES" <<'PY'
import sys
folder, pages = sys.argv[1], int(sys.argv[2])
for i in range(pages):
    body = "".join(f"<p>Item {i}-{j}: lorem ipsum dolor sit amet.</p>\n" for j in range(90))
    page = f"<!DOCTYPE html><html><head><title>Page {i}</title></head><body>\n{body}</body></html>\n"
    page = page[:4096].ljust(4096)
    open(f"{folder}/page-{i}.html", "w").write(page)
PY
chmod -R a+rX "$WORK/html"
cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
daemon off;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  open_file_cache max=1000;
  client_body_temp_path $WORK/tmp_body;
  proxy_temp_path $WORK/tmp_proxy;
  fastcgi_temp_path $WORK/tmp_fastcgi;
  uwsgi_temp_path $WORK/tmp_uwsgi;
  scgi_temp_path $WORK/tmp_scgi;
  server {
    listen 127.0.0.1:$PORT;
    root $WORK/html;
  }
}
CONF
"$NGINX" -p "$WORK" -c "$WORK/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do
  if curl -s -o /dev/null "http://127.0.0.1:$PORT/page-0.html" 2>/dev/null \
    || python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$PORT/page-0.html')" 2>/dev/null; then
    break
  fi
  sleep 0.1
done

BENCH="${FORAGE_BENCH:-}"
if [ -z "$BENCH" ]; then
  echo "building forage-bench (release)…" >&2
  (cd "$ROOT" && swift build -c release --product forage-bench >&2)
  BENCH="$ROOT/.build/release/forage-bench"
fi

cat > "$WORK/pages.lua" <<LUA
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/page-" .. (n % $PAGES) .. ".html")
end
LUA

echo "nginx on 127.0.0.1:$PORT, $PAGES pages of 4 KB; $CONCURRENCY connections"
WRK_OUT="$(wrk -t2 -c"$CONCURRENCY" -d"${DURATION}s" -s "$WORK/pages.lua" "http://127.0.0.1:$PORT/")"
WRK_RATE="$(echo "$WRK_OUT" | awk '/Requests\/sec/ {print $2}')"
echo "wrk: $WRK_RATE requests/s"

FORAGE_OUT="$("$BENCH" fetch --base "http://127.0.0.1:$PORT" --pages "$PAGES" \
  --requests "$REQUESTS" --concurrency "$CONCURRENCY" --threads "$THREADS" --transport "$TRANSPORT")"
echo "$FORAGE_OUT"
echo "$FORAGE_OUT" | while read -r line; do
  name="${line%%:*}"
  rate="$(echo "$line" | sed -n 's/.*= \([0-9.]*\) requests\/s.*/\1/p')"
  [ -n "$rate" ] || continue
  python3 -c "print(f'$name / wrk: {float($rate) / float($WRK_RATE) * 100:.0f}%')"
done
