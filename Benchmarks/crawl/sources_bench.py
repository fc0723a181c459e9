#!/usr/bin/env python3
"""One launch of 20 sources on 20 loopback hosts, one of them slow (issue 10).

    python3 Benchmarks/crawl/sources_bench.py OLD_FORAGE NEW_FORAGE [--runs 3]

Serves one generated shop on 20 ports with nginx; the first port answers at
`--slow-rate` bytes/s per connection (nginx `limit_rate`), the others at full
speed. Each source crawls its own port (up to `--pages` pages), the slow one
listed first, within a `--budget` (an app refresh's 30 s by default). Each
binary runs the same launch on a fresh store, alternating, so that a change of
the shared host's speed hits both alike; prints each launch and the medians:
wall time, pages fetched, records, and how many of the 19 fast sources
completed. A build that runs sources one after another spends the budget on
the slow site first; one that runs them interleaved completes the fast ones.
Build forage-bench first (swift build -c release --product forage-bench).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import crawl_bench as cb

HOSTS = 20


def config(ports, pages, budget):
    shop = cb.crawl_config("http://127.0.0.1:0")["sources"][0]
    sources = []
    for i, port in enumerate(ports):
        s = json.loads(json.dumps(shop))
        s["name"] = f"site{i:02d}" + ("-slow" if i == 0 else "")
        s["url"] = f"http://127.0.0.1:{port}/"
        s["crawl"]["maxPages"] = pages
        sources.append(s)
    return {
        "userAgent": "ForageBench/1.0",
        "fetch": {"concurrency": 16, "perHostConcurrency": 2, "perHostDelay": "0s",
                  "robotsTxt": False, "timeout": "30s", "adaptiveDelay": False},
        "tasks": [{"id": "refresh", "kind": "appRefresh", "every": "15m", "budget": f"{budget}s",
                   "sources": [s["name"] for s in sources]}],
        "sources": sources,
    }


def launch(binary, cfg, work, n):
    store = os.path.join(work, f"store-{n}.sqlite")
    start = time.monotonic()
    out = subprocess.run([binary, "run", "--config", cfg, "--store", store, "--task", "refresh", "--json"],
                         capture_output=True, text=True)
    wall = time.monotonic() - start
    if out.returncode not in (0, 1):
        sys.exit(f"{binary} failed ({out.returncode}): {out.stderr}")
    summary = json.loads(out.stdout)
    fast = [c for c in summary.get("completedSources", []) if not c.endswith("-slow")]
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    return {"wall": wall, "pages": summary["pagesFetched"], "records": summary["recordsNew"],
            "fast_completed": len(fast)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+", help="forage executables to compare")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--products", type=int, default=300)
    ap.add_argument("--pages", type=int, default=120, help="pages per source")
    ap.add_argument("--budget", type=int, default=30, help="seconds")
    ap.add_argument("--slow-rate", default="2k", help="the slow host's bytes/s per connection")
    ap.add_argument("--bench", default=os.path.join(cb.ROOT, ".build/release/forage-bench"))
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="forage-sources-")
    os.chmod(work, 0o755)
    site = os.path.join(work, "site")
    subprocess.run([args.bench, "site", site, "--products", str(args.products)], check=True,
                   stdout=subprocess.DEVNULL)
    ports = [cb.free_port() for _ in range(HOSTS)]
    # With sendfile, nginx's limit_rate applies per sendfile call; off, per write.
    nginx = cb.start_nginx_servers(site, ports, work, {ports[0]: f"limit_rate {args.slow_rate}; sendfile off;"})
    cfg = os.path.join(work, "forage.json")
    with open(cfg, "w") as f:
        json.dump(config(ports, args.pages, args.budget), f)
    results = {b: [] for b in args.binaries}
    try:
        n = 0
        for r in range(args.runs):
            for b in args.binaries:
                n += 1
                res = launch(b, cfg, work, n)
                results[b].append(res)
                print(f"run {r + 1} {b}: {res['wall']:.1f} s, {res['pages']} pages, {res['records']} records, "
                      f"{res['fast_completed']}/{HOSTS - 1} fast sources completed", flush=True)
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"{HOSTS} sources on {HOSTS} hosts (host 1 at {args.slow_rate}/s), up to {args.pages} pages each, "
          f"budget {args.budget} s; medians of {args.runs}:")
    for b, rs in results.items():
        med = lambda k: statistics.median(x[k] for x in rs)
        print(f"  {b}: {med('wall'):.1f} s, {med('pages'):.0f} pages, {med('records'):.0f} records, "
              f"{med('fast_completed'):.0f}/{HOSTS - 1} fast sources completed")


if __name__ == "__main__":
    main()
