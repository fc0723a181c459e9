"""Fleet benchmark (issue 27): one generated shop (nginx on loopback) crawled into SQLite
and into PostgreSQL by 1..3 `forage run` workers, each store crawled twice (a first
crawl into a fresh store, then a recrawl after a few products changed), plus one
worker whose database is 1 ms away (a delaying TCP proxy on loopback).

Run it through Benchmarks/run-fleet-bench.sh, which builds the release binaries and
starts a throwaway PostgreSQL with fsync on (scripts/with-postgres with
FORAGE_POSTGRES_FSYNC=on sets FORAGE_TEST_POSTGRES_URL and FORAGE_TEST_POSTGRES_DATA).

What is measured, for each store, workers and case:
- pages: the pages the workers answered (their `--json` summaries: fetched, not
  modified, fresh, failed), over the wall time from the first worker's start to the
  last one's exit;
- worker CPU: user + system time of the worker processes (RUSAGE_CHILDREN);
- server CPU: user + system time of the postmaster and every live child of it
  (/proc/PID/stat), plus the postmaster's cutime + cstime (the backends that exited
  were reaped by the postmaster, so their time is there), after minus before;
- nginx CPU: its master's and worker's user + system time, after minus before;
- machine busy: the share of all cores' time that was not idle (and, apart, the share
  spent waiting for I/O), from /proc/stat over the crawl: a crawl near 100% is bound
  by the CPU, one well under it waits for something else;
- records: every store's export is checked equal to the SQLite run's, after the first
  crawl and after the recrawl.
With --worker-cores C, every worker runs in a cpu cgroup of its own that lets it use at
most C cores (root and a writable cpu cgroup needed): a fleet of small machines sharing
one server, in place of several workers competing for this machine's cores, where more
workers can only divide the same CPU among them.
Then the issue's targets are printed with pass or fail.
"""
import argparse
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "crawl"))
from crawl_bench import crawl_config, free_port, norm_forage, start_nginx  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
FIRST, RECRAWL, AWAY = "first crawl", "recrawl", "1 ms away"


def psql(url, sql):
    return subprocess.run(["psql", url, "-At", "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def psql_rows(url, sql):
    """Rows of `sql` as lists of text (fields split on the unit separator, never in SQL text)."""
    out = subprocess.run(["psql", url, "-At", "-F", "\x1f", "-c", sql], check=True, capture_output=True, text=True).stdout
    return [line.split("\x1f") for line in out.splitlines() if line]


class Statements:
    """pg_stat_statements (when the server preloads it), read per crawl: the extension lives in
    the database `postgres` (a store refuses a database that holds other tables) and sees
    every database's statements."""

    def __init__(self, url):
        self.admin = database_url(url, "postgres")
        psql(self.admin, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        self.tops = []  # (label, pages, rows)

    def reset(self):
        psql(self.admin, "SELECT pg_stat_statements_reset()")

    def read(self, label, database, pages, limit=10):
        rows = psql_rows(self.admin, f"""
            SELECT calls, round((total_exec_time + total_plan_time)::numeric, 1), rows,
                   left(regexp_replace(query, '\\s+', ' ', 'g'), 150)
            FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{database}')
            ORDER BY total_exec_time + total_plan_time DESC LIMIT {limit}""")
        total = psql(self.admin, f"""
            SELECT coalesce(round(sum(total_exec_time + total_plan_time)::numeric, 1), 0), coalesce(sum(calls), 0)
            FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '{database}')""")
        self.tops.append((label, pages, total, rows))

    def report(self):
        for label, pages, total, rows in self.tops:
            ms, calls = total.split("|")
            print()
            print(f"statements, {label}: {float(ms) / pages:.3f} ms of statement time a page in all, "
                  f"{int(calls) / pages:.1f} statements a page (pg_stat_statements: execution + planning, wall time)")
            print("| ms/page | calls/page | rows/call | statement |")
            print("|---|---|---|---|")
            for calls, ms, nrows, query in rows:
                calls, ms, nrows = int(calls), float(ms), int(nrows)
                print(f"| {ms / pages:.3f} | {calls / pages:.2f} | {nrows / max(calls, 1):.1f} | `{query.replace('|', '/')}` |")


def database_url(base, name, port=None):
    head, _, _ = base.rpartition("/")
    if port is not None:
        head = re.sub(r":\d+$", f":{port}", head)
    return head + "/" + name


# --- the server's CPU, from its processes -------------------------------------------

def proc_stat(pid):
    """(ppid, utime + stime, cutime + cstime) of `pid` in clock ticks, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # after "pid (comm) "; fields[0] is state
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


class ServerCPU:
    """The CPU time of the PostgreSQL server whose data folder is `data`."""

    def __init__(self, data):
        with open(os.path.join(data, "postmaster.pid")) as f:
            self.postmaster = int(f.readline())

    def children(self):
        pids = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                st = proc_stat(int(name))
                if st and st[0] == self.postmaster:
                    pids.append(int(name))
        return pids

    def seconds(self):
        """Everything the server has used so far: its live processes and the reaped ones."""
        _, own, reaped = proc_stat(self.postmaster)
        total = own + reaped
        for pid in self.children():
            st = proc_stat(pid)
            if st:
                total += st[1]
        return total / CLOCK_TICKS

    def settle(self, baseline):
        """Waits (up to 3 s) until the server has no more children than `baseline`, so the
        backends of the workers that just exited have been reaped into the postmaster's
        cutime (a zombie's time would be counted nowhere)."""
        for _ in range(60):
            if len(self.children()) <= baseline:
                return
            time.sleep(0.05)


def machine_ticks():
    """(busy, idle, iowait) clock ticks of the whole machine so far, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle, iowait = fields[3], fields[4]
    return sum(fields[:8]) - idle - iowait, idle, iowait


def machine_share(before, after):
    """(busy, iowait) shares of all cores' time between two `machine_ticks` readings."""
    busy, idle, iowait = (a - b for a, b in zip(after, before))
    total = max(1, busy + idle + iowait)
    return busy / total, iowait / total


def proc_kind(pid):
    """What a server process is, from its title: backend, autovacuum, or background (WAL
    writer, checkpointer, background writer, launchers); None when it is gone or has not
    set its title yet (a process just forked still shows the postmaster's command line)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            title = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    if not title.startswith("postgres: "):
        return None
    # The title's first word names the process; a backend's is its user (and a backend's
    # title may end in words such as "startup", so only the first word counts).
    words = title[len("postgres: "):].split()
    first = words[0] if words else ""
    if first == "autovacuum" and "worker" in words[1:2]:
        return "autovacuum"
    if first in ("walwriter", "checkpointer", "background", "autovacuum", "logical", "archiver", "stats", "logger",
                 "startup", "walreceiver", "walsender"):
        return "background"
    return "backend"


class ServerSampler:
    """The server's CPU split by kind of process (see `proc_kind`) during one crawl: every
    child of the postmaster read every 20 ms, so a process that exits between samples
    loses at most its last 20 ms; the total, from `ServerCPU`, is the larger of its own
    count and the samples' sum."""

    KINDS = ("backend", "autovacuum", "background")

    def __init__(self, server):
        self.server = server
        self.first = {}  # pid -> ticks when first seen (0 for a process born during the crawl)
        self.last = {}
        self.kind = {}
        self.stop = threading.Event()
        self._sample(initial=True)
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _sample(self, initial=False):
        for pid in self.server.children():
            st = proc_stat(pid)
            if not st:
                continue
            if pid not in self.first:
                self.first[pid] = st[1] if initial else 0
            if self.kind.get(pid) is None:
                self.kind[pid] = proc_kind(pid)
            self.last[pid] = st[1]

    def _loop(self):
        while not self.stop.wait(0.02):
            self._sample()

    def finish(self):
        """Seconds of CPU by kind."""
        self.stop.set()
        self.thread.join()
        self._sample()
        split = dict.fromkeys(self.KINDS, 0.0)
        for pid, kind in self.kind.items():
            split[kind or "backend"] += (self.last[pid] - self.first[pid]) / CLOCK_TICKS
        return split


# --- variants of the server (attribution) ------------------------------------------

# What a variant changes in a new store after its migrations, before the workers start
# (benchmark-only SQL: the product has no such switch). "no-coverage" keeps the commit's
# upsert of crawl_fields but has a trigger skip its rows (the statement still runs and
# nothing is written or locked), as if extraction health kept no coverage.
VARIANT_SQL = {
    "as-is": [],
    "no-order-lock": ["DROP TRIGGER changes_order ON changes"],
    "no-notify": ["DROP TRIGGER changes_notify ON changes"],
    "no-triggers": ["DROP TRIGGER changes_order ON changes", "DROP TRIGGER changes_notify ON changes"],
    "no-coverage": [
        "CREATE FUNCTION fleet_bench_skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$",
        "CREATE TRIGGER fleet_bench_no_coverage BEFORE INSERT ON crawl_fields FOR EACH ROW "
        "EXECUTE FUNCTION fleet_bench_skip_row()",
    ],
}


def parse_variant(text, forage):
    """(name, SQL to run, worker environment, forage binary) of a `--variants` item: names
    of VARIANT_SQL joined by '+', `sql:STATEMENT`, `env:NAME=VALUE` or `forage:PATH` (another
    build, e.g. main's, that migrates, crawls and exports its own stores)."""
    if text.startswith("sql:"):
        return text, [text[4:]], {}, forage
    if text.startswith("env:") and "=" in text:
        name, _, value = text[4:].partition("=")
        return text, [], {name: value}, forage
    if text.startswith("forage:"):
        path = text[len("forage:"):]
        if not os.access(path, os.X_OK):
            sys.exit(f"--variants: '{path}' is not an executable forage")
        return text, [], {}, path
    sql = []
    for part in text.split("+"):
        if part not in VARIANT_SQL:
            sys.exit(f"--variants: '{part}' is not one of {', '.join(VARIANT_SQL)}, sql:STATEMENT, env:NAME=VALUE "
                     "or forage:PATH")
        sql += VARIANT_SQL[part]
    return text, sql, {}, forage


def prepare_store(forage, cfg, store, sql, server):
    """Migrates the new store `store` (one `forage health accept`, before the workers start: a
    migration is not a page's cost) and runs a variant's `sql` in it; returns the
    server's CPU seconds of the migration."""
    baseline, before = len(server.children()), server.seconds()
    # `forage health accept` opens the store for writing (which migrates it) and, with
    # nothing held, writes nothing else (it exits 2: nothing is held); reading commands
    # such as `status` neither create nor migrate a store.
    with open(cfg) as f:
        source = json.load(f)["sources"][0]["name"]
    subprocess.run([forage, "health", "accept", source, "--config", cfg, "--store", store],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server.settle(baseline)
    migration = server.seconds() - before
    if psql(store, "SELECT to_regclass('changes') IS NULL") == "t":
        sys.exit(f"`{forage} health accept ... --store ...` did not migrate the new store: the bench needs another way")
    for statement in sql:
        psql(store, statement)
    return migration


# --- a database 1 ms away ------------------------------------------------------------

class DelayProxy:
    """A TCP proxy on 127.0.0.1 that forwards to (host, port) and holds every chunk it
    reads for `delay` seconds before writing it on, in each direction; a chunk's delay
    starts when it arrives, so chunks in flight are delayed together, as on a long wire
    (latency, no bandwidth limit). A request and its reply thus take 2 x `delay` longer.
    `held` / `chunks` is the mean hold measured.

    Threads, not asyncio: each direction of a connection has a reader and a writer, and
    the writer sleeps until a chunk is due with `time.sleep` (a nanosleep, tens of
    microseconds late). An asyncio proxy held chunks 1.6 ms for 1 ms: epoll's timeouts are
    whole milliseconds, rounded up."""

    def __init__(self, host, port, delay):
        self.target = (host, port)
        self.delay = delay
        self.held = 0.0
        self.chunks = 0
        self.lock = threading.Lock()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target)
            except OSError:
                client.close()
                continue
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._pipe(client, server)
            self._pipe(server, client)

    def _pipe(self, src, dst):
        chunks = queue.Queue()

        def read():
            try:
                while True:
                    data = src.recv(1 << 16)
                    if not data:
                        break
                    chunks.put((time.monotonic() + self.delay, data))
            except OSError:
                pass
            chunks.put((0, None))

        def write():
            try:
                while True:
                    due, data = chunks.get()
                    if data is None:
                        break
                    wait = due - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                    with self.lock:
                        self.held += time.monotonic() - (due - self.delay)
                        self.chunks += 1
                    dst.sendall(data)
            except OSError:
                pass
            # The first direction to end ends the other (its read fails) and closes both.
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

        threading.Thread(target=read, daemon=True).start()
        threading.Thread(target=write, daemon=True).start()

    def mean_hold_ms(self):
        return 1000 * self.held / self.chunks if self.chunks else 0.0

    def close(self):
        self.closed = True
        self.listener.close()


# --- the shop, a few products changed for the recrawl ---------------------------------

# The shop writes its markup in several styles (`<span class="price">`, `<SPAN class=price>`).
PRICE = re.compile(rb'(<span[^>]*class=["\']?price["\']?[^>]*>)([^<]*)(</span>)', re.I)


def changed_price(match):
    """The same price with its last digit changed (cents, so it stays a price)."""
    text = match.group(2)
    last = max(i for i, c in enumerate(text) if 48 <= c <= 57)
    digit = bytes([48 + (text[last] - 48 + 1) % 10])
    return match.group(1) + text[:last] + digit + text[last + 1:] + match.group(3)


class Changes:
    """Changes the price of every `every`th product page (new bytes, a later mtime, so
    nginx answers 200 to a conditional request), and puts the originals back."""

    def __init__(self, site, every):
        folder = os.path.join(site, "product")
        names = sorted(os.listdir(folder), key=lambda n: int(n.split(".")[0]) if n.split(".")[0].isdigit() else 0)
        self.files = [os.path.join(folder, n) for n in names[::every]]
        self.originals = {}
        for path in self.files:
            with open(path, "rb") as f:
                body = f.read()
            if not PRICE.search(body):
                sys.exit(f"{path} has no price to change: the shop's layout changed; update Changes.PRICE")
            st = os.stat(path)
            self.originals[path] = (body, st.st_atime_ns, st.st_mtime_ns)

    def apply(self):
        for path, (body, atime, mtime) in self.originals.items():
            changed = PRICE.sub(changed_price, body, count=1)
            with open(path, "wb") as f:
                f.write(changed)
            os.utime(path, ns=(atime, mtime + 3600 * 10**9))

    def restore(self):
        for path, (body, atime, mtime) in self.originals.items():
            with open(path, "wb") as f:
                f.write(body)
            os.utime(path, ns=(atime, mtime))


# --- one crawl -----------------------------------------------------------------------

class CPUCap:
    """Cgroups of the cpu controller, one a worker, each letting its processes use at most
    `cores` cores (cgroup v2's cpu.max, or v1's cfs quota), in a 10 ms period so a capped
    worker is held for short spells rather than for most of a second."""

    PERIOD_US = 10_000

    def __init__(self, cores):
        self.cores = cores
        self.dirs = []
        if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            self.root, self.v2 = "/sys/fs/cgroup", True
            with open("/sys/fs/cgroup/cgroup.controllers") as f:
                if "cpu" not in f.read().split():
                    sys.exit("--worker-cores: this machine's cgroups have no cpu controller")
        else:
            self.root, self.v2 = "/sys/fs/cgroup/cpu", False
        if not os.access(self.root, os.W_OK):
            sys.exit(f"--worker-cores needs a writable cpu cgroup ({self.root}): run as root")
        if self.v2:
            # A child's cpu.max needs the controller enabled below the root.
            with open(os.path.join(self.root, "cgroup.subtree_control"), "w") as f:
                f.write("+cpu")

    def make(self, index):
        """A new cgroup for worker `index`; returns a preexec_fn that moves the child into it."""
        path = os.path.join(self.root, f"forage-fleet-bench-{os.getpid()}-{index}-{len(self.dirs)}")
        os.mkdir(path)
        self.dirs.append(path)
        quota = max(1000, int(self.cores * self.PERIOD_US))
        if self.v2:
            with open(os.path.join(path, "cpu.max"), "w") as f:
                f.write(f"{quota} {self.PERIOD_US}")
        else:
            with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
                f.write(str(self.PERIOD_US))
            with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
                f.write(str(quota))
        procs = os.path.join(path, "cgroup.procs")

        def enter():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        return enter

    def throttling(self):
        """(periods, periods throttled, seconds throttled) summed over the cgroups made."""
        periods = throttled = seconds = 0
        for path in self.dirs:
            try:
                with open(os.path.join(path, "cpu.stat")) as f:
                    stat = dict(line.split() for line in f if len(line.split()) == 2)
            except OSError:
                continue
            periods += int(stat.get("nr_periods", 0))
            throttled += int(stat.get("nr_throttled", 0))
            # v2 counts microseconds, v1 nanoseconds.
            seconds += int(stat["throttled_usec"]) / 1e6 if "throttled_usec" in stat \
                else int(stat.get("throttled_time", 0)) / 1e9
        return periods, throttled, seconds

    def remove(self):
        """Removes every cgroup made (their processes have exited)."""
        for path in self.dirs:
            try:
                os.rmdir(path)
            except OSError:
                pass
        self.dirs = []


def crawl(forage, cfg, store, workers, server, env=None, nginx=None, cap=None):
    """Starts `workers` processes at once on `store` (with `env` added to their
    environment); returns (pages, wall s, worker CPU s, server CPU s or None, records
    changed, server CPU s by kind of process or None, (machine busy share, iowait share),
    nginx CPU s or None). With `cap` (a CPUCap), every worker runs in a cgroup of its own."""
    nginx_before = nginx_seconds(nginx)
    machine_before = machine_ticks()
    baseline = len(server.children()) if server else 0
    server_before = server.seconds() if server else 0
    sampler = ServerSampler(server) if server else None
    before = os.times()
    start = time.monotonic()
    worker_env = dict(os.environ, **(env or {}))
    try:
        procs = [subprocess.Popen([forage, "run", "--config", cfg, "--store", store, "--budget", "1h", "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=worker_env,
                                  preexec_fn=cap.make(i) if cap else None)
                 for i in range(workers)]
        pages = changed = 0
        for p in procs:
            out, err = p.communicate()
            if p.returncode != 0:
                sys.exit(f"a worker failed ({p.returncode}): {err.decode()[-500:]}")
            s = json.loads(out)
            pages += s["pagesFetched"] + s["pagesNotModified"] + s["pagesFresh"] + s["pagesFailed"]
            changed += s["recordsChanged"]
    finally:
        if cap:
            periods, throttled, held = cap.throttling()
            if periods:
                print(f"  (the workers' cgroups: held in {throttled} of {periods} periods, {100 * throttled / periods:.0f}%,"
                      f" {held:.2f} s in all)", file=sys.stderr)
            cap.remove()
    wall = time.monotonic() - start
    machine = machine_share(machine_before, machine_ticks())
    nginx_cpu = None if nginx_before is None else nginx_seconds(nginx) - nginx_before
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    server_cpu = split = None
    if server:
        server.settle(baseline)
        server_cpu = server.seconds() - server_before
        split = sampler.finish()
        # What the samples saw is a lower bound; the total from the postmaster's reaped
        # time fell below it in some crawls (a backend not yet reaped when the count of
        # processes was back to the baseline counts nowhere), so it is the floor.
        server_cpu = max(server_cpu, sum(split.values()))
    return pages, wall, cpu, server_cpu, changed, split, machine, nginx_cpu


def nginx_seconds(nginx):
    """The CPU seconds nginx's master (`nginx`, a Popen) and its worker have used, or None."""
    if nginx is None:
        return None
    total = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and (int(name) == nginx.pid or st[0] == nginx.pid):
                total += st[1]
    return total / CLOCK_TICKS


def export(forage, store, path):
    subprocess.run([forage, "export", "--store", store, "--out", path], check=True, stderr=subprocess.DEVNULL)
    return norm_forage(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--forage", default=".build/release/forage")
    ap.add_argument("--bench", default=".build/release/forage-bench")
    ap.add_argument("--products", type=int, default=3000)
    ap.add_argument("--max-workers", type=int, default=3)
    ap.add_argument("--change-every", type=int, default=100,
                    help="the recrawl finds every Nth product's price changed (default 100: 1%%)")
    ap.add_argument("--delay-ms", type=float, default=1.0, help="the proxy's delay each way (default 1)")
    ap.add_argument("--statements", action="store_true",
                    help="also print the statements that cost the server most per page (pg_stat_statements; "
                         "the server must preload it: run-fleet-bench.sh does when given this option)")
    ap.add_argument("--variants", default="as-is",
                    help="comma-separated variants of the PostgreSQL crawls, run one after another in each round: "
                         "as-is, no-order-lock, no-notify, no-triggers (migration pg7's triggers on changes dropped "
                         "before the workers start), no-coverage (crawl_fields rows skipped), several joined by '+', "
                         "sql:STATEMENT (run in the new store), env:NAME=VALUE (the workers get NAME=VALUE, for an "
                         "experimental build), forage:PATH (another build, e.g. main's, for its stores and crawls); the targets are judged on the first (default as-is)")
    ap.add_argument("--per-host-concurrency", type=int, default=0,
                    help="the shop's requests at once, fleet-wide, and each worker's (default the crawl "
                         "benchmark's 16)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="run every variant's crawls this many times, alternating (default 1)")
    ap.add_argument("--no-away", action="store_true", help="leave out the worker 1 ms away")
    ap.add_argument("--worker-cores", type=float, default=None,
                    help="let every worker (SQLite's too) use at most this many cores, each in a cpu cgroup of "
                         "its own: a fleet of small machines sharing the server (needs root)")
    args = ap.parse_args()
    cap = CPUCap(args.worker_cores) if args.worker_cores else None
    if args.per_host_concurrency < 0:
        sys.exit(f"--per-host-concurrency: {args.per_host_concurrency} is not a number of requests (1 or more)")
    variants = [parse_variant(v, args.forage) for v in args.variants.split(",") if v]
    url = os.environ.get("FORAGE_TEST_POSTGRES_URL")
    data = os.environ.get("FORAGE_TEST_POSTGRES_DATA")
    if not url or not data:
        sys.exit("FORAGE_TEST_POSTGRES_URL is not set: run Benchmarks/run-fleet-bench.sh")
    server = ServerCPU(data)
    statements = Statements(url) if args.statements else None
    fsync = psql(url, "SHOW fsync")
    host, port = re.search(r"@([^:/]+):(\d+)/", url).groups()

    work = tempfile.mkdtemp(prefix="forage-fleet-bench-")
    os.chmod(work, 0o755)
    site = os.path.join(work, "site")
    subprocess.run([args.bench, "site", site, "--products", str(args.products)], check=True, stdout=subprocess.DEVNULL)
    changes = Changes(site, args.change_every)
    os.sync()
    nginx_port = free_port()
    nginx = start_nginx(site, nginx_port, work)
    proxy = None
    rows = []  # Row
    migrations = []  # server CPU s of each new store's migration
    try:
        cfg = os.path.join(work, "forage.json")
        with open(cfg, "w") as f:
            config = crawl_config(f"http://127.0.0.1:{nginx_port}")
            if args.per_host_concurrency:
                config["fetch"]["perHostConcurrency"] = config["fetch"]["concurrency"] = args.per_host_concurrency
            json.dump(config, f)

        reference = {}

        def both_crawls(label, workers, store, cases, srv, database=None, variant="", env=None, rnd=1,
                        forage=args.forage):
            for case in cases:
                if case == RECRAWL:
                    changes.apply()
                if statements and database:
                    statements.reset()
                try:
                    result = crawl(forage, cfg, store, workers, srv, env, nginx, cap)
                finally:
                    if case == RECRAWL:
                        changes.restore()
                if statements and database:
                    statements.read(f"{workers} worker(s), {case}, {variant}".rstrip(", "), database, result[0])
                key = RECRAWL if case == RECRAWL else FIRST
                records = export(forage, store, os.path.join(work, f"{label}-{workers}-{len(rows)}.jsonl"))
                if label == "sqlite":
                    reference[key] = records
                elif records != reference[key]:
                    sys.exit(f"{workers} worker(s) on PostgreSQL ({case}, {variant}) stored other records than "
                             "the SQLite run")
                rows.append(Row(label, workers, case, variant, rnd, *result))
                print(f"  {label} x{workers} {case} {variant}: {result[0]} pages in {result[1]:.2f} s",
                      file=sys.stderr)

        both_crawls("sqlite", 1, os.path.join(work, "single.sqlite"), [FIRST, RECRAWL], None)
        configurations = [(w, [FIRST, RECRAWL]) for w in range(1, args.max_workers + 1)]
        proxy = DelayProxy(host, int(port), args.delay_ms / 1000)
        if not args.no_away:
            configurations.append((1, [AWAY]))
        for rnd in range(1, args.rounds + 1):
            for workers, cases in configurations:
                for variant, sql, env, forage in variants:
                    name = f"fleet_bench_{workers}_{len(rows)}_{os.getpid()}"
                    psql(url, f"CREATE DATABASE {name}")
                    try:
                        migrations.append(prepare_store(forage, cfg, database_url(url, name), sql, server))
                        store = database_url(url, name, proxy.port if cases == [AWAY] else None)
                        both_crawls("postgres", workers, store, cases, server, name, variant, env, rnd, forage)
                    finally:
                        psql(url, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        report(args, rows, fsync, proxy, variants[0][0], len(variants) > 1)
        print(f"- each PostgreSQL store was migrated before its workers started (not timed): "
              f"{1000 * sum(migrations) / len(migrations):.0f} ms of server CPU a migration on average")
        if statements:
            statements.report()
    finally:
        if proxy:
            proxy.close()
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)


class Row:
    """One crawl's figures."""

    def __init__(self, store, workers, case, variant, rnd, pages, wall, cpu, server_cpu, changed, split,
                 machine, nginx_cpu):
        self.store, self.workers, self.case, self.variant, self.round = store, workers, case, variant, rnd
        self.pages, self.wall, self.cpu, self.server_cpu, self.changed, self.split = (
            pages, wall, cpu, server_cpu, changed, split)
        self.machine, self.nginx_cpu = machine, nginx_cpu

    @property
    def rate(self):
        return self.pages / self.wall


def split_of(row):
    """The server's CPU of `row` by kind of process, then what no sample saw (processes that
    exited between samples, counted only in the total)."""
    seen = [row.split[k] for k in ServerSampler.KINDS]
    return seen + [max(0.0, row.server_cpu - sum(seen))]


def report(args, rows, fsync, proxy, judged, several):
    def find(store, workers, case):
        return next((r for r in rows if (r.store, r.workers, r.case) == (store, workers, case)
                     and r.variant in ("", judged)), None)

    at_once = args.per_host_concurrency or crawl_config("")["fetch"]["perHostConcurrency"]
    print(f"site: {args.products} products, nginx on loopback; {at_once} requests at once, no delay (the host's {at_once} "
          f"are shared by a fleet's workers: fleet-wide politeness); the recrawl finds every {args.change_every}th product's price changed")
    print(f"PostgreSQL: fsync {fsync}, on this machine ({os.cpu_count()} cores) beside the workers and nginx; "
          f"'1 ms away': every chunk held {args.delay_ms:g} ms each way by a proxy on loopback "
          f"(measured mean hold {proxy.mean_hold_ms():.2f} ms), so each round trip is "
          f"{2 * proxy.mean_hold_ms():.1f} ms longer")
    if args.worker_cores:
        print(f"every worker (SQLite's too) capped at {args.worker_cores:g} cores, each in a cpu cgroup of its own "
              f"(a fleet of small machines sharing the server, nginx and the server uncapped)")
    print(f"load average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print()
    extra = " variant | round |" if several else ""
    print(f"| store | workers | case |{extra} pages | seconds | pages/s | ratio to SQLite | worker CPU ms/page | "
          "server CPU ms/page | of it: backends, autovacuum, background, unsampled | nginx CPU ms/page | "
          "machine busy, iowait | records changed |")
    print("|---|---|---|" + ("---|---|" if several else "") + "---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        sqlite = find("sqlite", 1, RECRAWL if row.case == RECRAWL else FIRST)
        srv = f"{1000 * row.server_cpu / row.pages:.2f}" if row.server_cpu is not None else "-"
        split = (", ".join(f"{1000 * v / row.pages:.2f}" for v in split_of(row)) if row.split else "-")
        cells = f" {row.variant or '-'} | {row.round} |" if several else ""
        nginx = f"{1000 * row.nginx_cpu / row.pages:.2f}" if row.nginx_cpu is not None else "-"
        print(f"| {row.store} | {row.workers} | {row.case} |{cells} {row.pages} | {row.wall:.2f} | {row.rate:.0f} | "
              f"{row.rate / sqlite.rate:.2f} | {1000 * row.cpu / row.pages:.2f} | {srv} | {split} | {nginx} | "
              f"{100 * row.machine[0]:.0f}%, {100 * row.machine[1]:.0f}% | {row.changed} |")
    if several:
        print()
        print("mean of the rounds, per variant:")
        print("| workers | case | variant | pages/s | worker CPU ms/page | server CPU ms/page | of it: backends, autovacuum, background, unsampled | machine busy |")
        print("|---|---|---|---|---|---|---|---|")
        groups = {}
        for row in rows:
            if row.store == "postgres":
                groups.setdefault((row.workers, row.case, row.variant), []).append(row)
        for (workers, case, variant), group in groups.items():
            pages = sum(r.pages for r in group)
            rate = sum(r.rate for r in group) / len(group)
            split = ", ".join(f"{1000 * sum(split_of(r)[i] for r in group) / pages:.2f}"
                              for i in range(len(ServerSampler.KINDS) + 1))
            print(f"| {workers} | {case} | {variant} | {rate:.0f} | {1000 * sum(r.cpu for r in group) / pages:.2f} | "
                  f"{1000 * sum(r.server_cpu for r in group) / pages:.2f} | {split} | "
                  f"{100 * sum(r.machine[0] for r in group) / len(group):.0f}% |")
    print()
    print(f"targets (issue 27){f', judged on the variant {judged}, round 1' if several else ''}:")
    sqlite, one, three, away = (find("sqlite", 1, FIRST), find("postgres", 1, FIRST),
                                find("postgres", args.max_workers, FIRST), find("postgres", 1, AWAY))

    def verdict(ok, text):
        print(f"- {'PASS' if ok else 'FAIL'}: {text}")

    verdict(one.rate >= 0.5 * sqlite.rate,
            f"one PostgreSQL worker at >= 50% of SQLite's pages/s: {one.rate:.0f} / {sqlite.rate:.0f} = "
            f"{100 * one.rate / sqlite.rate:.0f}%")
    if args.max_workers > 1:
        verdict(three.rate > one.rate,
                f"{args.max_workers} workers faster than one: {three.rate:.0f} vs {one.rate:.0f} pages/s")
    judged_rows = [r for r in rows if r.server_cpu is not None and r.variant == judged]
    worst = max(judged_rows, key=lambda r: r.server_cpu / r.pages)
    verdict(worst.server_cpu / worst.pages <= 0.0003,
            f"the server's CPU <= 0.3 ms a page in every PostgreSQL row: at most "
            f"{1000 * worst.server_cpu / worst.pages:.2f} ({worst.workers} worker(s), {worst.case})")
    if away:
        verdict(away.rate >= 0.8 * one.rate,
                f"the worker 1 ms away at >= 80% of the local one: {away.rate:.0f} / {one.rate:.0f} = "
                f"{100 * away.rate / one.rate:.0f}%")
    print("- PASS: records identical to the SQLite run in every row (checked after each crawl)")


if __name__ == "__main__":
    main()
