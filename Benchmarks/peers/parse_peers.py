#!/usr/bin/env python3
"""Measure Python HTML parsers the way `forage-bench parse` measures ForageHTML.

    python3 Benchmarks/peers/parse_peers.py DIR [--repeat K] [--select SEL] [--extract] [--json]
                                            [--parsers selectolax,lxml,html5lib]

Every `.html` file of DIR is read into memory once (as bytes); each parser then
parses all of them from those bytes (so encoding detection is part of the work,
as for ForageHTML), once untimed to warm up and K timed passes. With --select,
each pass also runs the CSS selector on every document and counts the matches
(the selector time is part of the pass). With --extract, each pass also does
per document what `forage-bench parse --extract` does (the crawl engine's work
on a demo shop product page): the first `div.product`, the text of the first
`h1.product-title` and of the first `span.price`, the `data-sku` of the first
`div.product` (looked up again), and the `href` of every `a[href]`; the
document is dropped inside the pass. Reported per parser: files, bytes of
one pass, median pass seconds, MB/s (1 MB = 10^6 bytes) and matches.

Peers:
  selectolax  selectolax's Lexbor backend (LexborHTMLParser, .css())
  lxml        lxml.html.document_fromstring (libxml2), cssselect for --select
  html5lib    html5lib.parse (pure Python); with --select it builds an lxml tree
              without namespaces so cssselect can run on it

The first run creates a virtual environment in Benchmarks/.venv and installs
the peers into it (pip, from PyPI); later runs reuse it. The script re-executes
itself with the venv's interpreter, so run it with any python3.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.normpath(os.path.join(HERE, "..", ".venv"))
VENV_PYTHON = os.path.join(VENV, "bin", "python")
PACKAGES = ["selectolax", "lxml", "cssselect", "html5lib"]
ALL_PARSERS = ["selectolax", "lxml", "html5lib"]


def in_venv():
    return os.path.normpath(sys.prefix) == VENV


def ensure_venv():
    """Create the venv and install the peers when missing, then re-exec in it."""
    if in_venv():
        return
    if not os.path.exists(VENV_PYTHON):
        print(f"creating {VENV} and installing {', '.join(PACKAGES)}…", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
    marker = os.path.join(VENV, ".forage-peers-installed")
    if not os.path.exists(marker):
        subprocess.check_call(
            [VENV_PYTHON, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES],
            stdout=sys.stderr,
        )
        with open(marker, "w") as f:
            f.write(" ".join(PACKAGES) + "\n")
    os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])


def load_pages(directory):
    names = sorted(n for n in os.listdir(directory) if n.lower().endswith(".html"))
    pages = []
    for name in names:
        with open(os.path.join(directory, name), "rb") as f:
            pages.append(f.read())
    return pages


def make_selectolax(selector):
    from selectolax.lexbor import LexborHTMLParser

    def one(data):
        tree = LexborHTMLParser(data)
        return len(tree.css(selector)) if selector else 0

    return one


def make_lxml(selector):
    import lxml.html

    css = None
    if selector:
        from lxml.cssselect import CSSSelector

        css = CSSSelector(selector, translator="html")

    def one(data):
        root = lxml.html.document_fromstring(data)
        return len(css(root)) if css is not None else 0

    return one


def make_html5lib(selector):
    import html5lib

    if not selector:
        def one(data):
            html5lib.parse(data)
            return 0

        return one

    from lxml.cssselect import CSSSelector

    css = CSSSelector(selector, translator="html")

    def one_select(data):
        root = html5lib.parse(data, treebuilder="lxml", namespaceHTMLElements=False)
        return len(css(root))

    return one_select


def make_selectolax_extract():
    from selectolax.lexbor import LexborHTMLParser

    def one(data):
        tree = LexborHTMLParser(data)
        total = 0
        if tree.css_first("div.product") is not None:
            total += 1
        title = tree.css_first("h1.product-title")
        if title is not None:
            total += len(title.text())
        price = tree.css_first("span.price")
        if price is not None:
            total += len(price.text())
        product = tree.css_first("div.product")
        if product is not None:
            sku = product.attributes.get("data-sku")
            if sku is not None:
                total += len(sku)
        for link in tree.css("a[href]"):
            href = link.attributes.get("href")
            if href is not None:
                total += len(href)
        return 0

    return one


def make_lxml_extract():
    import lxml.html
    from lxml.cssselect import CSSSelector

    product_sel = CSSSelector("div.product", translator="html")
    title_sel = CSSSelector("h1.product-title", translator="html")
    price_sel = CSSSelector("span.price", translator="html")
    links_sel = CSSSelector("a[href]", translator="html")

    def first(sel, root):
        found = sel(root)
        return found[0] if found else None

    def one(data):
        root = lxml.html.document_fromstring(data)
        total = 0
        if first(product_sel, root) is not None:
            total += 1
        title = first(title_sel, root)
        if title is not None:
            total += len(title.text_content())
        price = first(price_sel, root)
        if price is not None:
            total += len(price.text_content())
        product = first(product_sel, root)
        if product is not None:
            total += len(product.get("data-sku") or "")
        for link in links_sel(root):
            total += len(link.get("href") or "")
        return 0

    return one


FACTORIES = {"selectolax": make_selectolax, "lxml": make_lxml, "html5lib": make_html5lib}
EXTRACT_FACTORIES = {"selectolax": make_selectolax_extract, "lxml": make_lxml_extract}


def measure(name, pages, repeat, selector, extract=False):
    one = EXTRACT_FACTORIES[name]() if extract else FACTORIES[name](selector)
    errors = 0

    def run_pass():
        nonlocal errors
        matches = 0
        for data in pages:
            try:
                matches += one(data)
            except Exception:  # a peer that cannot parse a page: count it, go on
                errors += 1
        return matches

    run_pass()  # warm-up
    errors = 0
    times = []
    matches = 0
    for _ in range(repeat):
        start = time.perf_counter()
        matches = run_pass()
        times.append(time.perf_counter() - start)
    total = sum(len(p) for p in pages)
    median = statistics.median(times)
    result = {
        "parser": name,
        "files": len(pages),
        "bytes": total,
        "median_seconds": round(median, 6),
        "mb_per_s": round(total / 1e6 / median, 2) if median > 0 else 0.0,
    }
    if selector:
        result["matches"] = matches
    if errors:
        result["errors"] = errors // max(repeat, 1)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", help="folder of .html files")
    ap.add_argument("--repeat", type=int, default=5, help="timed passes (default 5)")
    ap.add_argument("--select", help="CSS selector to run on each document")
    ap.add_argument("--extract", action="store_true",
                    help="also do the crawl engine's product-page extraction (selectolax and lxml)")
    ap.add_argument("--json", action="store_true", help="print a JSON array")
    ap.add_argument("--parsers", default=",".join(ALL_PARSERS),
                    help="comma-separated subset of " + ",".join(ALL_PARSERS))
    ap.add_argument("--no-venv", action="store_true",
                    help="use the current interpreter's packages instead of Benchmarks/.venv")
    args = ap.parse_args()
    if not args.no_venv:
        ensure_venv()
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    parsers = [p.strip() for p in args.parsers.split(",") if p.strip()]
    if args.extract and args.select:
        ap.error("--extract and --select do not go together")
    if args.extract:
        parsers = [p for p in parsers if p in EXTRACT_FACTORIES]
    unknown = [p for p in parsers if p not in FACTORIES]
    if unknown:
        ap.error("unknown parser(s): " + ", ".join(unknown))
    pages = load_pages(args.directory)
    if not pages:
        ap.error(f"no .html files in {args.directory}")

    warnings.simplefilter("ignore")  # html5lib's lxml builder warns on data loss
    results = []
    for name in parsers:
        if not args.json:
            print(f"measuring {name}…", file=sys.stderr)
        results.append(measure(name, pages, args.repeat, args.select, args.extract))

    if args.json:
        print(json.dumps(results))
        return
    header = f"{'parser':<12} {'files':>5} {'bytes':>10} {'median s':>10} {'MB/s':>9}"
    if args.select:
        header += f" {'matches':>8}"
    print(header)
    for r in results:
        line = f"{r['parser']:<12} {r['files']:>5} {r['bytes']:>10} {r['median_seconds']:>10.4f} {r['mb_per_s']:>9.2f}"
        if args.select:
            line += f" {r['matches']:>8}"
        if r.get("errors"):
            line += f"  ({r['errors']} pages failed)"
        print(line)


if __name__ == "__main__":
    main()
