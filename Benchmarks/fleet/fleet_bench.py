"""Fleet benchmark: one generated shop (nginx on loopback) crawled by 1, 2 and 3
`forage run` workers on one PostgreSQL store, beside one worker on SQLite.

Run it through Benchmarks/run-fleet-bench.sh, which builds the release binaries and
starts a throwaway PostgreSQL (scripts/with-postgres sets FORAGE_TEST_POSTGRES_URL).
Each configuration crawls the whole shop into a fresh store; pages/s is the pages the
store marked done (or failed) over the wall time from the first worker's start to the
last one's exit. Each store's records are checked equal to the SQLite run's.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "crawl"))
from crawl_bench import crawl_config, free_port, norm_forage, start_nginx  # noqa: E402


def psql(url, sql):
    return subprocess.run(["psql", url, "-At", "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def database_url(base, name):
    head, _, _ = base.rpartition("/")
    return head + "/" + name


def crawl(forage, cfg, store, workers):
    """Starts `workers` processes at once on `store`; returns (wall seconds, CPU seconds of all)."""
    start = time.monotonic()
    before = os.times()
    procs = [subprocess.Popen([forage, "run", "--config", cfg, "--store", store, "--budget", "1h", "--quiet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(workers)]
    for p in procs:
        _, err = p.communicate()
        if p.returncode != 0:
            sys.exit(f"a worker failed ({p.returncode}): {err.decode()[-500:]}")
    wall = time.monotonic() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--forage", default=".build/release/forage")
    ap.add_argument("--bench", default=".build/release/forage-bench")
    ap.add_argument("--products", type=int, default=3000)
    ap.add_argument("--max-workers", type=int, default=3)
    args = ap.parse_args()
    server = os.environ.get("FORAGE_TEST_POSTGRES_URL")
    if not server:
        sys.exit("FORAGE_TEST_POSTGRES_URL is not set: run Benchmarks/run-fleet-bench.sh")

    work = tempfile.mkdtemp(prefix="forage-fleet-bench-")
    os.chmod(work, 0o755)
    site = os.path.join(work, "site")
    subprocess.run([args.bench, "site", site, "--products", str(args.products)], check=True, stdout=subprocess.DEVNULL)
    os.sync()
    port = free_port()
    nginx = start_nginx(site, port, work)
    try:
        cfg = os.path.join(work, "forage.json")
        with open(cfg, "w") as f:
            json.dump(crawl_config(f"http://127.0.0.1:{port}"), f)

        sqlite = os.path.join(work, "single.sqlite")
        wall, cpu = crawl(args.forage, cfg, sqlite, 1)
        export = os.path.join(work, "single.jsonl")
        subprocess.run([args.forage, "export", "--store", sqlite, "--out", export], check=True)
        reference = norm_forage(export)
        pages = int(subprocess.run(
            ["sqlite3", sqlite, "SELECT count(*) FROM frontier WHERE state IN ('done','failed')"],
            capture_output=True, text=True).stdout.strip() or 0) if shutil_which("sqlite3") else None
        rows = [("sqlite", 1, pages, wall, cpu)]
        for workers in range(1, args.max_workers + 1):
            name = f"fleet_bench_{workers}_{os.getpid()}"
            psql(server, f"CREATE DATABASE {name}")
            try:
                url = database_url(server, name)
                wall, cpu = crawl(args.forage, cfg, url, workers)
                done = int(psql(url, "SELECT count(*) FROM frontier WHERE state IN ('done','failed')"))
                export = os.path.join(work, f"fleet-{workers}.jsonl")
                subprocess.run([args.forage, "export", "--store", url, "--out", export], check=True)
                if norm_forage(export) != reference:
                    sys.exit(f"{workers} worker(s) on PostgreSQL stored other records than the SQLite run")
                rows.append(("postgres", workers, done, wall, cpu))
            finally:
                psql(server, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        if rows[0][2] is None:
            rows[0] = ("sqlite", 1, rows[1][2], rows[0][3], rows[0][4])
        print(f"site: {args.products} products, nginx on loopback; 16 requests at once per worker, no delay")
        print("| store | workers | pages | seconds | pages/s | CPU ms/page (all workers) |")
        print("|---|---|---|---|---|---|")
        for store, workers, pages, wall, cpu in rows:
            print(f"| {store} | {workers} | {pages} | {wall:.2f} | {pages / wall:.0f} | {1000 * cpu / pages:.2f} |")
    finally:
        nginx.terminate()
        nginx.wait()
        import shutil
        shutil.rmtree(work, ignore_errors=True)


def shutil_which(name):
    from shutil import which
    return which(name)


if __name__ == "__main__":
    main()
