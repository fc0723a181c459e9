#!/usr/bin/env python3
"""Crawl benchmark: Forage and Scrapy crawl the same generated shop from nginx.

Run by run-crawl-bench.sh, which builds Forage in release mode and makes the
virtual environment. Prints pages/s, CPU seconds per page and peak memory of
each crawler, the ratios, and whether both produced the same records.
"""
import argparse
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


LIBCS = ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6", "/lib64/libc.so.6"]
MALLOC_EVENT = "probe_libc:malloc"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(cmd, **kw):
    """Runs cmd to completion; returns (exit code, wall seconds, stdout, stderr)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    out, err = proc.communicate()
    wall = time.monotonic() - start
    return proc.returncode, wall, out.decode(), err.decode()


def run_measured(cmd, **kw):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code, wall, out, err = measure(cmd, **kw)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code != 0:
        sys.exit(f"command failed ({code}): {' '.join(cmd)}\n{out[-3000:]}\n{err[-3000:]}")
    return wall, cpu, out, err


def peak_rss_mib(cmd, **kw):
    """Runs cmd under GNU time to read its own peak RSS (RUSAGE_CHILDREN's is a max over all children)."""
    timed = ["/usr/bin/time", "-f", "MAXRSS %M"] + cmd
    wall, cpu, out, err = run_measured(timed, **kw)
    rss = 0
    for line in err.splitlines():
        if line.startswith("MAXRSS "):
            rss = int(line.split()[1]) / 1024
    return wall, cpu, rss, out, err


def start_nginx(root, port, workdir):
    return start_nginx_servers(root, [port], workdir)


def start_nginx_servers(root, ports, workdir, directives=None):
    """Serves `root` on each of `ports`; `directives` maps a port to extra
    server directives (e.g. `limit_rate 2k;`)."""
    directives = directives or {}
    servers = "\n".join(
        f"  server {{ listen 127.0.0.1:{p}; root {root}; index index.html; {directives.get(p, '')} }}"
        for p in ports)
    conf = os.path.join(workdir, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""
worker_processes 1;
daemon off;
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  default_type text/html;
  types {{ text/html html; text/plain txt; }}
  sendfile on;
  keepalive_requests 100000;
  client_body_temp_path {workdir}/tmp; proxy_temp_path {workdir}/tmp; fastcgi_temp_path {workdir}/tmp;
  uwsgi_temp_path {workdir}/tmp; scgi_temp_path {workdir}/tmp;
{servers}
}}
""")
    os.makedirs(os.path.join(workdir, "tmp"), exist_ok=True)
    proc = subprocess.Popen(["nginx", "-c", conf, "-p", workdir])
    for port in ports:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            proc.kill()
            sys.exit("nginx did not start; see " + os.path.join(workdir, "nginx-error.log"))
    return proc


class MallocProbe:
    """perf's uprobe on libc's malloc: added when missing, removed again if added here."""

    def __init__(self):
        self.added = False
        self.error = None
        if not shutil.which("perf"):
            self.error = "perf is not installed (apt-get install linux-perf)"
            return
        listed = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True)
        if MALLOC_EVENT in listed.stdout:
            return
        libc = next((p for p in LIBCS if os.path.exists(p)), None)
        if libc is None:
            self.error = "libc.so.6 not found in " + ", ".join(LIBCS)
            return
        made = subprocess.run(["perf", "probe", "-x", libc, "malloc"], capture_output=True, text=True)
        if made.returncode != 0:
            self.error = "perf probe failed: " + (made.stderr.strip().splitlines() or ["?"])[-1]
            return
        self.added = True

    def count(self, cmd, workdir, **kw):
        """Runs cmd under perf stat; returns (malloc calls, stdout, stderr), or None if perf fails."""
        out_file = os.path.join(workdir, "perf-stat.csv")
        proc = subprocess.run(["perf", "stat", "-x", ",", "-e", MALLOC_EVENT, "-o", out_file, "--"] + cmd,
                              capture_output=True, text=True, **kw)
        if proc.returncode == 0 and os.path.exists(out_file):
            with open(out_file) as f:
                for line in f:
                    parts = line.strip().split(",")
                    if len(parts) > 2 and parts[2] == MALLOC_EVENT and parts[0].isdigit():
                        return int(parts[0]), proc.stdout, proc.stderr
        print(f"--allocs: no malloc count from perf stat (exit {proc.returncode}) for {cmd[0]}: "
              f"{proc.stderr.strip()[-500:]}", file=sys.stderr)
        return None

    def close(self):
        if self.added:
            subprocess.run(["perf", "probe", "-d", MALLOC_EVENT], capture_output=True)


def forage_run(forage, cfg, store, export):
    """One `forage run` of `cfg` into `store` (measured), then its records
    exported to `export`: (wall s, CPU s, peak MiB, the run's summary, pages
    answered)."""
    wall, cpu, rss, out, err = peak_rss_mib(
        [forage, "run", "--config", cfg, "--store", store, "--budget", "1h", "--json"])
    summary = json.loads(out)
    pages = summary["pagesFetched"] + summary["pagesFailed"]
    subprocess.run([forage, "export", "--store", store, "--out", export], check=True, stderr=subprocess.DEVNULL)
    return wall, cpu, rss, summary, pages


def crawl_config(base):
    """The Forage config of the benchmark crawl of the shop at `base`: the settings
    Scrapy gets too (16 requests at once, no delay, robots.txt off)."""
    return {
        "userAgent": "ForageBench/1.0",
        "fetch": {"concurrency": 16, "perHostConcurrency": 16, "perHostDelay": "0s",
                  "robotsTxt": False, "timeout": "30s",
                  # Scrapy's AutoThrottle is off by default: no adaptive delay either.
                  "adaptiveDelay": False},
        "sources": [{
            "name": "shop", "url": base + "/",
            "crawl": {"follow": "a[href]", "sameHost": True, "maxDepth": 1000,
                      "maxPages": 10000000, "revisitAfter": "0s"},
            "match": "div.product", "key": ["sku"],
            "extract": {"title": "h1.product-title",
                        "price": {"css": "span.price", "type": "number"},
                        "sku": {"css": "div.product", "attr": "data-sku", "required": True}},
        }],
    }


def norm_forage(path):
    rows = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            fields = r["fields"]
            rows[fields["sku"]] = (" ".join((fields.get("title") or "").split()), round(fields["price"], 2) if fields.get("price") is not None else None)
    return rows


def norm_scrapy(path):
    rows = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            rows[r["sku"]] = (r["title"], round(r["price"], 2) if r["price"] is not None else None)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--products", type=int, default=10000)
    ap.add_argument("--forage", default=os.path.join(ROOT, ".build/release/forage"))
    ap.add_argument("--bench", default=os.path.join(ROOT, ".build/release/forage-bench"))
    ap.add_argument("--scrapy", default=os.path.join(HERE, "..", ".venv/bin/scrapy"))
    ap.add_argument("--skip-scrapy", action="store_true")
    ap.add_argument("--allocs", action="store_true",
                    help="also count malloc calls per page (perf probe on libc's malloc; one more run each)")
    ap.add_argument("--forage-runs", type=int, default=3,
                    help="Forage crawls (fresh store each); the median one is reported (default 3)")
    args = ap.parse_args()

    work = tempfile.mkdtemp(prefix="forage-crawl-bench-")
    os.chmod(work, 0o755)  # nginx's workers (www-data when started as root) read the site
    site = os.path.join(work, "site")
    subprocess.run([args.bench, "site", site, "--products", str(args.products)], check=True, stdout=subprocess.DEVNULL)
    pages_on_site = 0
    # Neither crawler should pay for the generator's writeback or a cold page
    # cache: flush the new files and read each once before crawling.
    os.sync()
    for folder, _, files in os.walk(site):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                f.read()
            pages_on_site += 1
    port = free_port()
    nginx = start_nginx(site, port, work)
    base = f"http://127.0.0.1:{port}"
    allocs = {}
    try:
        config = crawl_config(base)
        cfg = os.path.join(work, "forage.json")
        with open(cfg, "w") as f:
            json.dump(config, f)
        # A Forage crawl lasts a second or two, so a moment of load on a shared
        # machine moves it a lot: it runs several times (Scrapy's minute-long
        # crawl averages the noise out by itself) and the median run counts.
        runs = []
        for i in range(max(1, args.forage_runs)):
            store = os.path.join(work, f"forage-{i}.sqlite")
            export = os.path.join(work, f"forage-{i}.jsonl")
            wall, cpu, rss, summary, pages = forage_run(args.forage, cfg, store, export)
            rows = norm_forage(export)
            if runs and rows != runs[0][5]:
                sys.exit(f"forage run {i + 1} produced other records than run 1")
            print(f"forage run {i + 1}: {pages} pages in {wall:.2f} s, {pages / wall:.0f} pages/s, "
                  f"{1000 * cpu / max(pages, 1):.3f} CPU ms/page, {rss:.1f} MiB", file=sys.stderr)
            runs.append((pages, wall, cpu, rss, len(rows), rows))
        runs.sort(key=lambda r: r[0] / r[1])
        forage_pages, wall, cpu, rss, count, forage_rows = runs[len(runs) // 2]
        results = [("forage", forage_pages, wall, cpu, rss, count)]

        same = None

        def scrapy_cmd(out):
            return [
                args.scrapy, "runspider", os.path.join(HERE, "shop_spider.py"), "-a", f"start={base}/",
                "-O", out + ":jsonlines",
                "-s", "CONCURRENT_REQUESTS=16", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=16",
                "-s", "DOWNLOAD_DELAY=0", "-s", "ROBOTSTXT_OBEY=False", "-s", "LOG_LEVEL=INFO",
                "-s", "TELNETCONSOLE_ENABLED=False", "-s", "DEPTH_LIMIT=0",
            ]

        def scrapy_responses(stderr):
            for line in stderr.splitlines():
                if "'downloader/response_count':" in line:
                    return int(line.split(":")[-1].strip().rstrip(",}"))
            return 0

        if args.allocs:
            probe = MallocProbe()
            if probe.error:
                print(f"--allocs skipped: {probe.error}", file=sys.stderr)
            else:
                try:
                    store = os.path.join(work, "forage-allocs.sqlite")
                    counted = probe.count([args.forage, "run", "--config", cfg, "--store", store, "--budget", "1h",
                                           "--json"], work)
                    if counted:
                        summary = json.loads(counted[1])
                        allocs["forage"] = counted[0] / max(summary["pagesFetched"] + summary["pagesFailed"], 1)
                    if not args.skip_scrapy:
                        counted = probe.count(scrapy_cmd(os.path.join(work, "scrapy-allocs.jsonl")), work)
                        if counted:
                            allocs["scrapy"] = counted[0] / max(scrapy_responses(counted[2]), 1)
                finally:
                    probe.close()

        if not args.skip_scrapy:
            items = os.path.join(work, "scrapy.jsonl")
            swall, scpu, srss, sout, serr = peak_rss_mib(scrapy_cmd(items))
            scrapy_pages = scrapy_responses(serr)
            scrapy_rows = norm_scrapy(items)
            results.append(("scrapy", scrapy_pages, swall, scpu, srss, len(scrapy_rows)))
            same = forage_rows == scrapy_rows
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)

    print(f"site: {args.products} products, {pages_on_site} files, served by nginx on loopback")
    if args.forage_runs > 1:
        print(f"forage: the median of {args.forage_runs} runs by pages/s (each run is printed on stderr)")
    print(f"{'crawler':<8} {'pages':>7} {'seconds':>8} {'pages/s':>9} {'CPU ms/page':>12} {'peak MiB':>9} {'records':>8}"
          + (f" {'mallocs/page':>13}" if allocs else ""))
    for name, pages, wall, cpu, rss, recs in results:
        print(f"{name:<8} {pages:>7} {wall:>8.2f} {pages / wall:>9.0f} {1000 * cpu / max(pages, 1):>12.3f} {rss:>9.1f} {recs:>8}"
              + (f" {allocs.get(name, float('nan')):>13.0f}" if allocs else ""))
    if allocs:
        print("(mallocs: calls of libc's malloc in one more run each, startup included; CPython's pymalloc "
              "serves objects of up to 512 bytes without malloc)")
    if len(results) == 2:
        f, s = results
        print(f"ratio forage/scrapy: pages/s x{(f[1] / f[2]) / (s[1] / s[2]):.1f}, "
              f"CPU per page x{(s[3] / max(s[1], 1)) / (f[3] / max(f[1], 1)):.1f} less, "
              f"peak memory x{s[4] / f[4]:.1f} less")
        print("records identical: " + ("yes" if same else "NO"))
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
