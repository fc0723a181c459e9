#!/usr/bin/env python3
"""Summarizes a PostgreSQL round-trip trace (FORAGE_POSTGRES_TRACE=FILE forage run ...):
round trips by connection and statement, with their count, their time, and how much of the
crawl's wall time each connection was busy (a connection busy most of the time is what a page
waits for). Usage: trace_summary.py FILE [--pages N] (N: pages crawled, for per-page figures)."""
import argparse
import collections


def kind(words):
    """A statement's kind from its opening words: `UPDATE frontier`, `WITH queued`..."""
    words = words.split()
    if not words:
        return "?"
    if words[0] == "SELECT" and len(words) > 1 and words[1].startswith("forage_"):
        return "SELECT " + words[1].split("(")[0]
    return " ".join(words[:3])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--pages", type=int, default=0)
    args = ap.parse_args()
    rows = collections.defaultdict(lambda: [0, 0.0, 0])  # (conn, kind) -> count, ms, statements
    busy = collections.defaultdict(float)
    first, last = None, 0.0
    with open(args.trace) as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 4)
            if len(parts) < 4:
                continue
            start, ms, conn, count = float(parts[0]), float(parts[1]), parts[2], int(parts[3])
            text = parts[4] if len(parts) > 4 else ""
            row = rows[(conn, kind(text))]
            row[0] += 1
            row[1] += ms
            row[2] += count
            busy[conn] += ms
            first = start if first is None else min(first, start)
            last = max(last, start + ms)
    wall = (last - (first or 0.0)) or 1.0
    per = f" {'per page':>9}" if args.pages else ""
    print(f"{'connection':<6} {'statement':<42} {'trips':>6}{per} {'stmts':>6} {'ms':>9} {'ms/trip':>8}")
    for (conn, k), (n, ms, stmts) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        extra = f" {n / args.pages:9.3f}" if args.pages else ""
        print(f"{conn:<6} {k[:42]:<42} {n:6d}{extra} {stmts:6d} {ms:9.1f} {ms / n:8.2f}")
    print(f"wall {wall:.0f} ms; busy: " + ", ".join(f"{c} {ms:.0f} ms ({100 * ms / wall:.0f}%)" for c, ms in busy.items()))


if __name__ == "__main__":
    main()
