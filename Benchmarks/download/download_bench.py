#!/usr/bin/env python3
"""Download benchmark: `forage download` against `curl -o` for one large file
served by nginx on loopback (issue 17).

Run by Benchmarks/run-download-bench.sh, which builds Forage in release mode.
Both clients download the same file into a fresh folder on the same file
system, alternately, --runs times each; the medians are compared as
throughput (forage / curl, bar: at least 0.8). forage also fsyncs the file,
renames it into place and records its state in SQLite, which curl does not:
a third column times `curl -o` followed by an fsync of the file, the same
durability. Peak memory is each process's own (wait4).
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "crawl"))
from crawl_bench import start_nginx_servers  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd):
    """Runs cmd; returns (wall seconds, peak RSS MiB of that process)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_maxrss / 1024


def make_file(path, size):
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for i in range(size >> 20):
            # Each MiB differs from the last (a shifted copy would not match).
            f.write(chunk[i % 4096:] + chunk[: i % 4096])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--forage", default=os.path.join(ROOT, ".build/release/forage"))
    parser.add_argument("--workdir", default=None, help="where the served file and the downloads go (default: a temp dir)")
    args = parser.parse_args()
    size = args.size_mib << 20

    work = args.workdir or tempfile.mkdtemp(prefix="forage-download-bench-")
    www = os.path.join(work, "www")
    os.makedirs(www, exist_ok=True)
    served = os.path.join(www, "file.bin")
    make_file(served, size)
    port = free_port()
    os.makedirs(os.path.join(work, "nginx"), exist_ok=True)
    nginx = start_nginx_servers(www, [port], os.path.join(work, "nginx"))
    url = f"http://127.0.0.1:{port}/file.bin"
    results = {"curl": [], "curl+fsync": [], "forage": []}
    peaks = {"curl": [], "forage": []}
    try:
        out = os.path.join(work, "out")

        def fresh():
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            # Earlier runs' dirty pages must not be flushed on the next one's time.
            os.sync()

        fresh()
        timed(["curl", "-sS", "-o", os.path.join(out, "warm.bin"), url])  # the served file into the page cache
        for _ in range(args.runs):
            fresh()
            wall, peak = timed(["curl", "-sS", "-o", os.path.join(out, "file.bin"), url])
            results["curl"].append(wall)
            peaks["curl"].append(peak)

            fresh()
            start = time.monotonic()
            timed(["curl", "-sS", "-o", os.path.join(out, "file.bin"), url])
            fd = os.open(os.path.join(out, "file.bin"), os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
            results["curl+fsync"].append(time.monotonic() - start)

            fresh()
            store = os.path.join(work, "downloads.sqlite")
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(store + suffix):
                    os.remove(store + suffix)
            wall, peak = timed([args.forage, "download", url, "--to", out, "--store", store, "--quiet"])
            if os.path.getsize(os.path.join(out, "file.bin")) != size:
                sys.exit("forage download left a file of the wrong size")
            results["forage"].append(wall)
            peaks["forage"].append(peak)
    finally:
        nginx.terminate()
        nginx.wait()
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)

    mib = size / (1 << 20)
    print(f"{args.size_mib} MiB over loopback from nginx, {args.runs} runs each, alternating; medians:")
    for name in ("curl", "curl+fsync", "forage"):
        m = statistics.median(results[name])
        runs = ", ".join(f"{t:.2f}" for t in results[name])
        print(f"  {name:11} {m:6.2f} s  {mib / m:7.0f} MiB/s   (runs: {runs})")
    for name in ("curl", "forage"):
        print(f"  peak RSS {name:7} {max(peaks[name]):6.1f} MiB")
    ratio = statistics.median(results["curl"]) / statistics.median(results["forage"])
    durable = statistics.median(results["curl+fsync"]) / statistics.median(results["forage"])
    print(f"forage / curl -o throughput: {ratio:.2f} (bar 0.80: {'met' if ratio >= 0.8 else 'NOT met'})")
    print(f"forage / (curl -o + fsync) throughput: {durable:.2f}")


if __name__ == "__main__":
    main()
