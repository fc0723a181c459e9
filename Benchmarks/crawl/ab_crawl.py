#!/usr/bin/env python3
"""Compares Forage builds on one crawl: alternates them over the same generated shop.

    python3 Benchmarks/crawl/ab_crawl.py /tmp/forage-old .build/release/forage --runs 6

Each round crawls once with every binary (fresh store each), so that a change of the
shared host's speed hits all of them alike; prints each crawl, then each binary's
median pages/s and CPU ms per page. Uses the site, nginx set-up and crawl settings of
crawl_bench.py (build forage-bench first: swift build -c release --product forage-bench).
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

import crawl_bench as cb


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries", nargs="+", help="forage executables to compare")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--products", type=int, default=10000)
    ap.add_argument("--bench", default=os.path.join(cb.ROOT, ".build/release/forage-bench"))
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="forage-ab-")
    os.chmod(work, 0o755)
    site = os.path.join(work, "site")
    subprocess.run([args.bench, "site", site, "--products", str(args.products)], check=True,
                   stdout=subprocess.DEVNULL)
    os.sync()
    port = cb.free_port()
    nginx = cb.start_nginx(site, port, work)
    config = cb.crawl_config(f"http://127.0.0.1:{port}")
    cfg = os.path.join(work, "forage.json")
    with open(cfg, "w") as f:
        json.dump(config, f)
    results = {b: [] for b in args.binaries}
    try:
        for _ in range(args.runs):
            for i, binary in enumerate(args.binaries):
                store = os.path.join(work, f"ab-{i}.sqlite")
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(store + suffix):
                        os.remove(store + suffix)
                wall, cpu, out, _ = cb.run_measured(
                    [binary, "run", "--config", cfg, "--store", store, "--budget", "1h", "--json"])
                pages = json.loads(out)["pagesFetched"]
                results[binary].append((pages / wall, 1000 * cpu / pages))
                print(f"{binary}: {pages / wall:.0f} pages/s, {1000 * cpu / pages:.3f} CPU ms/page", flush=True)
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)
    for binary, runs in results.items():
        print(f"{binary}: median {statistics.median(r[0] for r in runs):.0f} pages/s, "
              f"{statistics.median(r[1] for r in runs):.3f} CPU ms/page over {len(runs)} crawls")


if __name__ == "__main__":
    main()
