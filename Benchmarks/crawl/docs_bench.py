#!/usr/bin/env python3
"""Docs crawl benchmark: Forage and Scrapy crawl the Python 3.11 docs served by nginx.

Run by run-docs-bench.sh, which installs python3.11-doc, nginx and the virtual
environment and builds Forage in release mode. The site is Debian's
python3.11-doc (/usr/share/doc/python3.11/html), served as it is installed by
nginx on loopback: link-heavy real pages (about 96 KB and 311 links a page).

Both crawlers start at index.html, follow every same-host <a href> (16 requests
at once, no delay, robots.txt off, no page cap) and give one record per HTML
page: its URL, title, first h1 and the href of every link made absolute, as an
array. Forage runs --forage-runs times and Scrapy --scrapy-runs times,
alternating; the median run of each by pages/s is reported with its CPU ms per
page and peak RSS, beside the load average. Then docs_reference.py checks both
crawlers' records against html5lib, field by field. --allocs counts malloc
calls per page in one more run of each (a perf uprobe on libc's malloc).

What is served and followed:
- nginx serves the files with their types (html as text/html, anything else
  unknown as application/octet-stream), as a stock nginx would.
- Links to other hosts (about 9,000 a crawl: python.org, github.com...) are
  kept in the records but not followed; mailto: links likewise.
- Same-host links reach 526 HTML pages, whatsnew/changelog.html (Debian ships
  it gzipped as changelog.html.gz: a 404, for both crawlers and the reference)
  and one download, _downloads/.../tzinfo_examples.py. Forage fetches the .py
  file (application/octet-stream: no record); Scrapy's LinkExtractor skips
  it by default (.py is in its IGNORED_EXTENSIONS) but fetches the start page
  twice (start requests are not filtered as duplicates): 528 responses each.
  Pages per second counts each crawler's own responses.
- The docs have no _sources/*.txt links (Debian's build leaves the "Show
  source" links out); _static/jquery.js and underscore.js are symlinks into
  /usr/share/javascript, which nginx follows, but no <a href> names them.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
# No __pycache__ beside the scripts (this one's imports, Scrapy's import of the spider).
sys.dont_write_bytecode = True
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"

from crawl_bench import MallocProbe, forage_run, free_port, peak_rss_mib, start_nginx_servers  # noqa: E402

DOCS = "/usr/share/doc/python3.11/html"
# A stock nginx's types for what the docs hold; anything else is a download.
TYPES = ("types { text/html html htm; text/plain txt; text/css css; application/javascript js; "
         "application/json json; image/png png; image/svg+xml svg; application/xml xml; } "
         "default_type application/octet-stream;")


def docs_config(start):
    """The Forage config of the docs crawl: the settings Scrapy gets too."""
    return {
        "userAgent": "ForageBench/1.0",
        "fetch": {"concurrency": 16, "perHostConcurrency": 16, "perHostDelay": "0s",
                  "robotsTxt": False, "timeout": "30s", "adaptiveDelay": False},
        "sources": [{
            "name": "docs", "url": start,
            # No maxPages cap (the frontier's limit is set far above the site).
            "crawl": {"follow": "a[href]", "sameHost": True, "maxDepth": 1000,
                      "maxPages": 10000000, "revisitAfter": "0s"},
            # No key: records are keyed by the page's canonical URL.
            "extract": {"title": "title", "h1": "h1",
                        "links": {"css": "a[href]", "attr": "href", "all": True}},
        }],
    }


def scrapy_cmd(scrapy, start, items):
    return [scrapy, "runspider", os.path.join(HERE, "docs_spider.py"), "-a", f"start={start}",
            "-O", items + ":jsonlines",
            "-s", "CONCURRENT_REQUESTS=16", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16",
            "-s", "DOWNLOAD_DELAY=0", "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=INFO",
            "-s", "TELNETCONSOLE_ENABLED=False", "-s", "DEPTH_LIMIT=0"]


def scrapy_stat(stderr, name):
    for line in stderr.splitlines():
        if f"'{name}':" in line:
            return int(line.split(":")[-1].strip().rstrip(",}"))
    return 0


def load():
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main():
    ap = argparse.ArgumentParser(description="Forage vs Scrapy on the Python 3.11 docs served by nginx.")
    ap.add_argument("--docs", default=DOCS, help=f"the docs' folder (default {DOCS})")
    ap.add_argument("--forage", default=os.path.join(ROOT, ".build/release/forage"))
    ap.add_argument("--scrapy", default=os.path.join(HERE, "..", ".venv/bin/scrapy"))
    ap.add_argument("--forage-runs", type=int, default=3,
                    help="Forage crawls (fresh store each); the median one is reported (default 3)")
    ap.add_argument("--scrapy-runs", type=int, default=1,
                    help="Scrapy crawls, alternating with Forage's; the median one is reported (default 1)")
    ap.add_argument("--skip-scrapy", action="store_true")
    ap.add_argument("--skip-reference", action="store_true", help="do not check the records against html5lib")
    ap.add_argument("--allocs", action="store_true",
                    help="also count malloc calls per page (perf probe on libc's malloc; one more run each)")
    ap.add_argument("--keep", metavar="DIR", help="copy the configs, exports and items here")
    args = ap.parse_args()
    if not os.path.isfile(os.path.join(args.docs, "index.html")):
        sys.exit(f"no docs at {args.docs} (apt-get install python3.11-doc)")

    work = tempfile.mkdtemp(prefix="forage-docs-bench-")
    os.chmod(work, 0o755)
    # Neither crawler should pay for a cold page cache: read every file once.
    files = 0
    for folder, _, names in os.walk(args.docs, followlinks=True):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                f.read()
            files += 1
    port = free_port()
    # The docs are world-readable where Debian installs them, so nginx's worker
    # (www-data when started as root) serves them in place.
    nginx = start_nginx_servers(os.path.abspath(args.docs), [port], work, {port: TYPES})
    start = f"http://127.0.0.1:{port}/index.html"
    probe = None
    print(f"before: {load()} ({os.cpu_count()} CPUs)", file=sys.stderr)
    try:
        cfg = os.path.join(work, "forage.json")
        with open(cfg, "w") as f:
            json.dump(docs_config(start), f, indent=1)

        forage_runs, scrapy_runs = [], []
        forage_rows = forage_export = scrapy_items = None

        def run_forage(i):
            nonlocal forage_rows, forage_export
            store = os.path.join(work, f"forage-{i}.sqlite")
            la = os.getloadavg()[0]
            export = os.path.join(work, f"forage-{i}.jsonl")
            wall, cpu, rss, summary, pages = forage_run(args.forage, cfg, store, export)
            with open(export) as f:
                rows = {r["url"]: r["fields"] for r in map(json.loads, f)}
            if forage_rows is None:
                forage_rows, forage_export = rows, export
                links = sum(len(r.get("links") or []) for r in rows.values())
                print(f"forage: {summary['pagesFetched']} fetched, {summary['pagesFailed']} failed, "
                      f"{summary['recordsNew']} records with {links} links; warnings: {summary.get('warnings')}",
                      file=sys.stderr)
            elif rows != forage_rows:
                sys.exit(f"forage run {i + 1} produced other records than run 1")
            print(f"forage run {i + 1}: {pages} pages in {wall:.2f} s, {pages / wall:.0f} pages/s, "
                  f"{1000 * cpu / max(pages, 1):.3f} CPU ms/page, {rss:.1f} MiB, {len(rows)} records "
                  f"(1-min load before: {la:.2f})", file=sys.stderr)
            forage_runs.append((pages, wall, cpu, rss, len(rows), la))
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(store + suffix):
                    os.remove(store + suffix)

        def run_scrapy(i):
            nonlocal scrapy_items
            items = os.path.join(work, f"scrapy-{i}.jsonl")
            la = os.getloadavg()[0]
            wall, cpu, rss, out, err = peak_rss_mib(scrapy_cmd(args.scrapy, start, items))
            pages = scrapy_stat(err, "downloader/response_count")
            errors = scrapy_stat(err, "log_count/ERROR")
            with open(items) as f:
                n = sum(1 for _ in f)
            print(f"scrapy run {i + 1}: {pages} pages in {wall:.2f} s, {pages / wall:.1f} pages/s, "
                  f"{1000 * cpu / max(pages, 1):.3f} CPU ms/page, {rss:.1f} MiB, {n} items, {errors} errors "
                  f"(1-min load before: {la:.2f})", file=sys.stderr)
            scrapy_runs.append((pages, wall, cpu, rss, n, la))
            scrapy_items = items

        f_runs = max(1, args.forage_runs)
        s_runs = 0 if args.skip_scrapy else max(1, args.scrapy_runs)
        for i in range(max(f_runs, s_runs)):
            if i < f_runs:
                run_forage(i)
            if i < s_runs:
                run_scrapy(i)

        allocs = {}
        if args.allocs:
            probe = MallocProbe()
            if probe.error:
                print(f"--allocs skipped: {probe.error}", file=sys.stderr)
            else:
                store = os.path.join(work, "forage-allocs.sqlite")
                counted = probe.count([args.forage, "run", "--config", cfg, "--store", store,
                                       "--budget", "1h", "--json"], work)
                if counted:
                    n, out, _ = counted
                    summary = json.loads(out)
                    allocs["forage"] = n / (summary["pagesFetched"] + summary["pagesFailed"])
                if counted and not args.skip_scrapy:
                    counted = probe.count(scrapy_cmd(args.scrapy, start, os.path.join(work, "scrapy-allocs.jsonl")), work)
                    if counted:
                        n, _, err = counted
                        allocs["scrapy"] = n / max(scrapy_stat(err, "downloader/response_count"), 1)

        checks = []
        if not args.skip_reference:
            import docs_reference
            ref = docs_reference.build(start)
            print()
            frows, fdupes = docs_reference.load_jsonl(forage_export, forage=True)
            same_w, _, _ = docs_reference.compare("forage", frows, ref, "links_whatwg", show=3)
            same_j, explained, other = docs_reference.compare("forage", frows, ref, "links", show=3)
            checks.append(("forage", same_w if docs_reference.ada_url else other == 0 and not fdupes,
                           "html5lib, links by WHATWG (ada-url)" if docs_reference.ada_url else
                           "html5lib, links by urljoin up to the urljoin/WHATWG cases"))
            if scrapy_items:
                srows, sdupes = docs_reference.load_jsonl(scrapy_items, forage=False)
                if sdupes:
                    print(f"scrapy: {sum(sdupes.values())} duplicate items (the start page, fetched twice): "
                          f"{dict(sdupes)}")
                same_s, _, _ = docs_reference.compare("scrapy", srows, ref, "links", show=3)
                if docs_reference.ada_url:
                    docs_reference.compare("scrapy", srows, ref, "links_whatwg", show=0)
                checks.append(("scrapy", same_s, "html5lib, links by urljoin"))
            print()
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            for name in [cfg, forage_export] + ([scrapy_items] if scrapy_items else []):
                shutil.copy(name, args.keep)
    finally:
        if probe:
            probe.close()
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)

    def median(runs):
        return sorted(runs, key=lambda r: r[0] / r[1])[len(runs) // 2]

    results = [("forage", median(forage_runs))] + ([("scrapy", median(scrapy_runs))] if scrapy_runs else [])
    print(f"site: Python 3.11 docs ({args.docs}, {files} files), served by nginx on loopback; start {start}")
    print(f"runs: forage {len(forage_runs)}, scrapy {len(scrapy_runs)}, alternating; the median by pages/s "
          f"is shown (each run is printed on stderr); {load()} after, {os.cpu_count()} CPUs")
    head = f"{'crawler':<8} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'CPU ms/page':>12} {'peak MiB':>9} {'records':>8} {'load':>5}"
    if allocs:
        head += f" {'mallocs/page':>13}"
    print(head)
    for name, (pages, wall, cpu, rss, recs, la) in results:
        line = (f"{name:<8} {pages:>6} {wall:>8.2f} {pages / wall:>8.1f} {1000 * cpu / max(pages, 1):>12.3f} "
                f"{rss:>9.1f} {recs:>8} {la:>5.2f}")
        if allocs:
            line += f" {allocs.get(name, float('nan')):>13.0f}"
        print(line)
    print("(pages: HTTP responses; load: the 1-minute load average when the run started; records: "
          "Scrapy's count includes the start page twice"
          + ("; mallocs: calls of libc's malloc, from one more run each, startup included; CPython's "
             "pymalloc serves objects of up to 512 bytes without malloc" if allocs else "") + ")")
    if len(results) == 2:
        (_, f), (_, s) = results
        print(f"ratio forage/scrapy: pages/s x{(f[0] / f[1]) / (s[0] / s[1]):.1f}, "
              f"CPU per page x{(s[2] / max(s[0], 1)) / (f[2] / max(f[0], 1)):.1f} less, "
              f"peak memory x{s[3] / f[3]:.1f} less"
              + (f", mallocs per page x{allocs['scrapy'] / allocs['forage']:.1f} fewer" if len(allocs) == 2 else ""))
    for name, same, against in checks:
        print(f"{name} records identical ({against}): {'yes' if same else 'NO'}")
    if any(not same for _, same, _ in checks):
        sys.exit(1)


if __name__ == "__main__":
    main()
