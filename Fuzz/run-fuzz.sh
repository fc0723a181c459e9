#!/usr/bin/env bash
# Builds Forage's libFuzzer targets (with AddressSanitizer) and runs one of them,
# or all of them in turn, for a bounded time each.
#
#   Fuzz/run-fuzz.sh [TARGET|all] [SECONDS] [extra libFuzzer flags...]
#   Fuzz/run-fuzz.sh SECONDS [extra libFuzzer flags...]    # the html target
#
# TARGET (default html; SECONDS default 60, per target with `all`):
#   html     HTML parser (encoding sniffing, fragments) and CSS selector parser  ParserFuzz.swift
#   url      WHATWG URL parser: href re-parses to itself, fast path agrees with
#            the full parser, canonical form and fingerprint                     URLFuzz.swift
#   robots   robots.txt parsing and matching against a reference matcher        RobotsFuzz.swift
#   json     JSON parse / serialize / parse round trip; the config reader        JSONFuzz.swift
#   units    duration and size parsers, duration formatting                      UnitsFuzz.swift
#   http     response header lines, Set-Cookie, Retry-After and HTTP dates,
#            the Content-Type charset                                            HTTPFuzz.swift
#   profile  device profile files (DeviceProfile.decode)                         ProfileFuzz.swift
#   encoding the Encoding Standard's decoders and labels: valid UTF-8 out,
#            bounded output, no CR                                               EncodingFuzz.swift
#   sitemap  sitemap files (urlset, index, text, feed; entry limit, loc form),
#            lastmod dates, and the inflater (gzip and raw DEFLATE: output
#            limit, a smaller limit gives a prefix, stored round trip)           SitemapFuzz.swift
#   feed     RSS, RDF, Atom and JSON Feed reading: deterministic, bounded
#            entries and problems, absolute links, ISO dates, extension paths  FeedFuzz.swift
#   shape    hostile page shapes (deep nesting, many attributes, unclosed
#            formatting runs) expanded from the input: parsing and queries
#            must take bounded time per byte, trees a bounded size          ShapeFuzz.swift
#
# Everything is written under .build/fuzz/: modules/ holds the Forage modules
# compiled with the sanitizers (rebuilt when their sources change), and each
# target has its own folder with the binary, corpus/ (seeded at the first run
# from ../shared/testdata when present, or from a few built-in samples) and the
# crash-*, timeout-* and leak-* files of any finding. Rerun a finding with
#   .build/fuzz/TARGET/TARGET-fuzz .build/fuzz/TARGET/crash-<hash>
# The exit status is libFuzzer's (with `all`: 1 when any target found something).
set -euo pipefail
cd "$(dirname "$0")/.."
script=Fuzz/run-fuzz.sh

targets=(html url robots json units http profile encoding sitemap feed shape)
target=html
if [ $# -gt 0 ] && ! [[ "$1" =~ ^[0-9]+$ ]]; then
  target="$1"
  shift
fi
seconds="${1:-60}"
shift || true
if [ "$target" != all ] && ! [[ " ${targets[*]} " == *" $target "* ]]; then
  echo "run-fuzz.sh: unknown target '$target' (expected one of: ${targets[*]}, all)" >&2
  exit 2
fi

out=.build/fuzz
modules="$out/modules"
testdata=../shared/testdata
# lld: gold warns about every sanitizer symbol it cannot export. One package
# name for every module, so `package` declarations are shared as in SwiftPM.
flags=(-parse-as-library -sanitize=fuzzer,address -O -g -use-ld=lld -package-name Forage)
mkdir -p "$modules"

# Compiles Sources/NAME into $modules/libNAME.a and its .swiftmodule, with
# -enable-testing so the fuzzers can `@testable import` it; the C modules
# (CCurl, CSQLite) are found through their module maps.
# Rebuilt when its sources, this script or a module it imports (DEPS) changed.
build_module() {
  local name="$1" lib="$modules/lib$1.a"
  shift
  local newer=("Sources/$name" "$script") dep
  for dep in "$@"; do newer+=("$modules/lib$dep.a"); done
  if [ -f "$lib" ] && [ -z "$(find "${newer[@]}" -newer "$lib" -print -quit)" ]; then
    return
  fi
  echo "run-fuzz.sh: compiling $name" >&2
  local sources=()
  while IFS= read -r f; do sources+=("$f"); done < <(find "Sources/$name" -name '*.swift' | sort)
  swiftc "${flags[@]}" -enable-testing -I "$modules" -I Sources/CCurl -I Sources/CSQLite \
    -module-name "$name" -emit-module -emit-module-path "$modules/$name.swiftmodule" \
    -emit-library -static "${sources[@]}" -o "$lib" || return 1
}

# The Swift modules of Sources/ that FILES import (the C modules excluded).
imports_of() {
  local m
  for m in $(sed -nE 's/^[[:space:]]*(@testable[[:space:]]+)?import[[:space:]]+([A-Za-z0-9_]+).*/\2/p' "$@" | sort -u); do
    if [ -d "Sources/$m" ] && [ ! -f "Sources/$m/module.modulemap" ]; then echo "$m"; fi
  done
}

# Appends the modules NAME imports, then NAME, to `order`, and records its
# direct imports in `imports`: a dependency order found from the sources, so
# modules moving between targets need no change here.
declare -A imports
visit() {
  local m="$1" d
  [[ " ${order[*]-} " == *" $m "* ]] && return
  imports[$m]="$(imports_of $(find "Sources/$m" -name '*.swift'))"
  for d in ${imports[$m]}; do visit "$d"; done
  order+=("$m")
}

# Builds .build/fuzz/TARGET/TARGET-fuzz.
build_target() {
  local t="$1" dir="$out/$1"
  mkdir -p "$dir/corpus"
  if [ "$t" = html ]; then
    # One module: the fuzzer reads ForageHTML's internals directly.
    swiftc "${flags[@]}" -module-name ForageHTML Sources/ForageHTML/*.swift Fuzz/ParserFuzz.swift \
      -o "$dir/html-fuzz" || return 1
    return
  fi
  if [ "$t" = shape ]; then
    swiftc "${flags[@]}" -module-name ForageHTML Sources/ForageHTML/*.swift Fuzz/ShapeFuzz.swift \
      -o "$dir/shape-fuzz" || return 1
    return
  fi
  if [ "$t" = encoding ]; then
    swiftc "${flags[@]}" -module-name ForageHTML Sources/ForageHTML/*.swift Fuzz/EncodingFuzz.swift \
      -o "$dir/encoding-fuzz" || return 1
    return
  fi
  local file
  case "$t" in
    url) file=URLFuzz ;; robots) file=RobotsFuzz ;; json) file=JSONFuzz ;; units) file=UnitsFuzz ;;
    http) file=HTTPFuzz ;; profile) file=ProfileFuzz ;; sitemap) file=SitemapFuzz ;; feed) file=FeedFuzz ;;
  esac
  order=()
  local m i libs=()
  for m in $(imports_of "Fuzz/$file.swift"); do visit "$m"; done
  for m in "${order[@]}"; do
    build_module "$m" ${imports[$m]} || return 1
  done
  # Link order: a library before the ones it uses.
  for ((i = ${#order[@]} - 1; i >= 0; i--)); do libs+=("-l${order[i]}"); done
  swiftc "${flags[@]}" -I "$modules" -I Sources/CCurl -I Sources/CSQLite -L "$modules" \
    "Fuzz/$file.swift" "${libs[@]}" $(pkg-config --libs libcurl sqlite3) -o "$dir/$t-fuzz" || return 1
}

# Writes seed files into an empty corpus: one file per sample, from the shared
# test data where it fits (never copied into the project), else built-in samples.
seed() {
  local t="$1" corpus="$out/$1/corpus"
  [ -z "$(ls -A "$corpus")" ] || return 0
  case "$t" in
    html)
      local dat="$testdata/html5lib-tests/tree-construction"
      [ -d "$dat" ] || return 0
      # One seed file per #data section of the .dat files.
      awk -v dir="$corpus" '
        /^#data$/ { if (f) close(f); n++; f = sprintf("%s/seed-%05d.html", dir, n); data = 1; next }
        /^#/ { data = 0; next }
        data { print > f }
      ' "$dat"/*.dat
      ;;
    url)
      if [ -f "$testdata/whatwg-url/urltestdata.json" ] && command -v python3 >/dev/null; then
        # Each test's input, then its base on the next line (the fuzzer
        # resolves the first line against the second).
        python3 - "$testdata/whatwg-url" "$corpus" <<'PY'
import json, os, sys
src, corpus = sys.argv[1], sys.argv[2]
seeds = set()
for case in json.load(open(os.path.join(src, "urltestdata.json"), encoding="utf-8")):
    if isinstance(case, dict) and "input" in case:
        base = case.get("base") or ""
        seeds.add(case["input"] + ("\n" + base if base else ""))
for group in json.load(open(os.path.join(src, "setters_tests.json"), encoding="utf-8")).values():
    for case in group if isinstance(group, list) else []:
        if isinstance(case, dict) and "href" in case:
            seeds.add(case["href"])
for n, s in enumerate(sorted(seeds)):
    with open(os.path.join(corpus, "seed-%05d" % n), "wb") as f:
        f.write(s.encode("utf-8", "surrogatepass"))
PY
      else
        printf '%s' 'https://Example.com:443/a/../b?q=1#top' >"$corpus/seed-1"
        printf '%s\n%s' '../c?d#e' 'http://h/a/b/' >"$corpus/seed-2"
      fi
      ;;
    robots)
      if [ -d "$testdata/robots" ] && command -v python3 >/dev/null; then
        # The robotstxt bodies of the textproto cases (C-style escaped strings).
        python3 - "$testdata/robots" "$corpus" <<'PY'
import codecs, glob, os, re, sys
src, corpus = sys.argv[1], sys.argv[2]
body = re.compile(r'robotstxt:\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
piece = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S)
n = 0
for path in sorted(glob.glob(os.path.join(src, "*", "*.textproto"))):
    for m in body.finditer(open(path, encoding="utf-8").read()):
        data = b"".join(codecs.escape_decode(p.encode("utf-8"))[0] for p in piece.findall(m.group(1)))
        n += 1
        with open(os.path.join(corpus, "seed-%04d" % n), "wb") as f:
            f.write(data)
PY
      else
        printf 'User-agent: *\nDisallow: /private/\nAllow: /private/ok$\nCrawl-delay: 2\nSitemap: https://h/s.xml\n' \
          >"$corpus/seed-1"
      fi
      ;;
    json)
      local n=0 f
      for f in Examples/*.json "$testdata"/encoding/*.json; do
        [ -f "$f" ] || continue
        n=$((n + 1))
        head -c 60000 "$f" >"$corpus/seed-$n.json"
      done
      if [ -f "$testdata/whatwg-url/urltestdata.json" ] && command -v python3 >/dev/null; then
        # Small documents: the test cases one by one.
        python3 - "$testdata/whatwg-url/urltestdata.json" "$corpus" <<'PY'
import json, os, sys
for n, case in enumerate(json.load(open(sys.argv[1], encoding="utf-8"))[:400]):
    with open(os.path.join(sys.argv[2], "case-%04d.json" % n), "w", encoding="utf-8") as f:
        json.dump(case, f, ensure_ascii=n % 2 == 0)
PY
      fi
      printf '%s' '[1, -0, 2.5e-3, 1E+400, "\ud83d\ude00\u0000", {"a": null, "b": [true, false]}]' >"$corpus/seed-values"
      ;;
    units)
      local s n=0
      for s in 500ms 30s 1.5m 15m 6h 1d 0s ' 2 GB' 10MiB 512KiB 1GiB 100KB 4096 1e308d 9223372036854775807 \
        0.0005ms 1e-320s -1s +5m .5s 5.s 0x10s nan inf 1_000ms; do
        n=$((n + 1))
        printf '%s' "$s" >"$corpus/seed-$n"
      done
      ;;
    http)
      printf 'HTTP/1.1 200 OK\r\nContent-Type: text/html; charset="ISO-8859-1"\r\nContent-Length: 12\r\nSet-Cookie: a=1; Path=/; Domain=.example.com; Secure\r\nSet-Cookie: b=2; Max-Age=0\r\n\r\n' \
        >"$corpus/seed-1"
      printf 'HTTP/1.1 503 Service Unavailable\r\nRetry-After: Sun, 06 Nov 1994 08:49:37 GMT\r\nX-Folded: a\r\n  b\r\n\r\n' \
        >"$corpus/seed-2"
      printf 'HTTP/1.1 301 Moved\r\nLocation: /new/../path?q#f\r\nRetry-After: 120\r\nSet-Cookie: id=x; path=/a; domain=example.com\r\n\r\n' \
        >"$corpus/seed-3"
      ;;
    encoding)
      # A first byte per encoding (it picks the encoding), then mixed bytes.
      local k
      for k in $(seq 0 39); do
        printf "\\x$(printf %02x "$k")"'<meta charset=x>\x82\xa0\x1b$B0!\x1b(B\x81\x30\x81\x30\xa4\x40\r\n\xd8\x00' \
          >"$corpus/seed-$k"
      done
      printf 'Shift_JIS\n' >"$corpus/seed-label"
      ;;
    feed)
      # The shared feed corpus, one seed per file (read from ../shared, kept under .build).
      local n=0 f
      if [ -d "$testdata/feeds" ]; then
        while IFS= read -r f; do
          n=$((n + 1))
          head -c 100000 "$f" >"$corpus/seed-$n"
        done < <(find "$testdata/feeds" -type f \( -name '*.xml' -o -name '*.rss' -o -name '*.atom' -o -name '*.json' \) | sort)
      fi
      if [ "$n" = 0 ]; then
        printf '%s' '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><item><title>A &amp; b&nbsp;</title><link>/a</link><pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate><itunes:duration>60</itunes:duration><enclosure url="/e.mp3" length="1"/></item></channel></rss>' \
          >"$corpus/seed-rss"
        printf '%s' '<feed xmlns="http://www.w3.org/2005/Atom" xml:base="https://h/x/"><entry><id>1</id><link href="../y"/><updated>2024-05-01T10:00:00+02:00</updated><content type="html">&lt;p>hi</content></entry></feed>' \
          >"$corpus/seed-atom"
        printf '%s' '{"version":"https://jsonfeed.org/version/1.1","items":[{"id":"1","url":"/z","_ext":{"value":3}}]}' >"$corpus/seed-json"
      fi
      ;;
    sitemap)
      printf '%s' '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><url><loc>https://example.com/a?x=1&amp;y=2</loc><lastmod>2024-05-01T10:20:30+02:00</lastmod><image:image><image:loc>https://cdn.example.com/1.jpg</image:loc></image:image></url><url><loc><![CDATA[/b]]></loc><lastmod>2024-05</lastmod></url></urlset>' \
        >"$corpus/seed-urlset"
      printf '%s' '<sitemapindex><sitemap><loc>https://example.com/s1.xml.gz</loc><lastmod>2024</lastmod></sitemap><sitemap><loc>https://example.com/s2.xml</loc></sitemap></sitemapindex>' \
        >"$corpus/seed-index"
      printf '\xef\xbb\xbf  <!-- c --><sm:urlset><url><loc>https://example.com/1</loc>\n<url><loc>https://example.com/&eacute;</lastmod></url><url><lastmod>x</lastmod></url><url><loc>https://exa' \
        >"$corpus/seed-broken"
      printf 'https://example.com/a\r\n\nhttps://example.com/b\nnot a url\n' >"$corpus/seed-text"
      printf '%s' '<rss version="2.0"><channel><item><link>https://example.com/n</link><pubDate>Wed, 01 May 2024 10:00:00 GMT</pubDate></item></channel></rss>' \
        >"$corpus/seed-feed"
      if command -v python3 >/dev/null; then
        # Compressed seeds: gzip of a urlset at two levels, and raw DEFLATE.
        python3 - "$corpus" <<'PY'
import os, sys, zlib
corpus = sys.argv[1]
doc = b"<urlset>" + b"".join(b"<url><loc>https://example.com/p/%d</loc><lastmod>2024-05-%02d</lastmod></url>" % (n, n % 28 + 1) for n in range(60)) + b"</urlset>"
for level in (1, 9):
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    open(os.path.join(corpus, "seed-gzip-%d" % level), "wb").write(c.compress(doc) + c.flush())
c = zlib.compressobj(6, zlib.DEFLATED, -15, 8, zlib.Z_FIXED)
open(os.path.join(corpus, "seed-deflate-fixed"), "wb").write(c.compress(doc) + c.flush())
PY
      fi
      ;;
    shape)
      # Programs of three-byte operations (operation, count, tag): deep
      # spans, formatting runs, list items under nesting, attributes.
      printf '\x00\x00\xff\x01\x00\xff\x01' >"$corpus/seed-deep-spans"
      printf '\x01\x03\xc0\x02\x00\x40\x04' >"$corpus/seed-formatting"
      printf '\x02\x00\xc0\x01\x05\xc0\x00' >"$corpus/seed-list-items"
      printf '\x00\x02\xff\x06\x07\x40\x0a' >"$corpus/seed-attributes"
      printf '\x01\x00\xf0\x07\x01\x30\x00\x00\x80\x09' >"$corpus/seed-tables"
      ;;
    profile)
      printf '%s' '{"name": "night-nurse", "appOpens": [{"at": "19:30", "jitter": "20m", "session": "5m", "probability": 0.9}], "screenSessions": [{"at": "03:00", "jitter": "1h", "session": "10m"}], "charging": [{"from": "09:00", "to": "15:00", "jitter": "30m"}], "network": {"default": "wifi", "windows": [{"from": "18:30", "to": "19:15", "network": "cellular"}]}, "lowPowerMode": [{"from": "04:00", "to": "07:00", "probability": 0.2}], "backgroundAppRefresh": "available", "forceQuitProbability": 0.05}' \
        >"$corpus/seed-1"
      printf '%s' '{"name": "server", "hasBattery": false, "network": {"default": "wired"}, "refreshPlacement": "asSoonAsEligible", "batteryDrainPerHour": 0.1}' \
        >"$corpus/seed-2"
      printf '%s' '{"name": "x", "summary": "", "appOpens": [{"at": "23:59:59", "jitter": "1.5d", "session": "0ms", "weekdaysOnly": true}], "lowPowerMode": [{"from": "24:00", "to": "00:00", "jitter": "500ms"}], "hasBattery": true, "batteryChargePerHour": 1, "backgroundAppRefresh": "denied"}' \
        >"$corpus/seed-3"
      ;;
  esac
}

run_target() {
  local t="$1" dir="$out/$1"
  shift
  build_target "$t" || return 1
  seed "$t"
  echo "run-fuzz.sh: fuzzing $t for ${seconds}s" >&2
  # Swift's own backtracer would hold the terminal after a crash: libFuzzer
  # and the sanitizer report it.
  SWIFT_BACKTRACE=enable=no "$dir/$t-fuzz" "$dir/corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
    -artifact_prefix="$dir/" "$@"
}

if [ "$target" != all ]; then
  run_target "$target" "$@"
  exit
fi
failed=()
for t in "${targets[@]}"; do
  run_target "$t" "$@" || failed+=("$t")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
