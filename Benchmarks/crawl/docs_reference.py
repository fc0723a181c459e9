#!/usr/bin/env python3
"""Reference records for the docs crawl benchmark, and the check of a crawler's records.

Crawls the served site itself (breadth first from the start URL, same-host links
with the fragment dropped, every URL once), parses every page served as
text/html with html5lib (the WHATWG HTML parsing algorithm) and computes for
each page:

- title: the text of the first <title> element;
- h1: the text of the first <h1> element;
- links: the href of every <a href> element in tree order, made absolute two
  ways: with urllib.parse.urljoin (what Scrapy's response.urljoin does), and
  with a WHATWG URL parser (ada-url) when it is installed.

The text of an element is its descendant text nodes in tree order (those
inside <script>, <style> and <template> left out), every run of ASCII
whitespace (U+0009 TAB, U+000A LF, U+000C FF, U+000D CR, U+0020 SPACE)
replaced by one space, and leading and trailing spaces removed. Nothing else is
normalised: link values are compared exactly as each side stores them. Both
resolutions use the document's base URL: the href of the first <base href>
element resolved against the page URL, else the page URL.

Used by docs_bench.py; also runs alone against a served copy of the docs:
    docs_reference.py --start http://127.0.0.1:PORT/index.html \
        [--forage forage-export.jsonl] [--scrapy scrapy-items.jsonl]
"""
import argparse
import http.client
import json
import multiprocessing
import re
import sys
import time
from collections import Counter, OrderedDict
from urllib.parse import urldefrag, urljoin, urlsplit

import html5lib

try:
    import ada_url
except ImportError:  # the WHATWG check is skipped
    ada_url = None

ASCII_WS = re.compile(r"[\t\n\f\r ]+")
SKIPPED_TEXT = {"script", "style", "template"}


def element_text(el):
    parts = []

    def walk(node):
        if node.text:
            parts.append(node.text)
        for child in node:
            if isinstance(child.tag, str) and child.tag not in SKIPPED_TEXT:
                walk(child)
            if child.tail:
                parts.append(child.tail)

    walk(el)
    return ASCII_WS.sub(" ", "".join(parts)).strip(" ")


def whatwg_join(base, href):
    if ada_url is None:
        return None
    try:
        return ada_url.join_url(base, href)
    except ValueError:
        return None  # not a valid URL


def page_fields(url, body, charset):
    """The reference fields of one page: (fields, links to follow)."""
    doc = html5lib.parse(body, transport_encoding=charset, namespaceHTMLElements=False)
    title = next(doc.iter("title"), None)
    h1 = next(doc.iter("h1"), None)
    base_url, whatwg_base = url, url
    for base in doc.iter("base"):
        if base.get("href") is not None:
            base_url = urljoin(url, base.get("href"))
            whatwg_base = whatwg_join(url, base.get("href")) or url
            break
    hrefs = [a.get("href") for a in doc.iter("a") if a.get("href") is not None]
    links = [urljoin(base_url, h) for h in hrefs]
    fields = {
        "title": element_text(title) if title is not None else None,
        "h1": element_text(h1) if h1 is not None else None,
        "links": links,
        "hrefs": hrefs,
        "links_whatwg": [whatwg_join(whatwg_base, h) for h in hrefs] if ada_url else None,
    }
    return fields, links


def _parse_job(job):
    return page_fields(*job)


def build(start, processes=None, log=sys.stderr):
    """Crawls the site from `start`; returns {page URL: fields} for the HTML pages."""
    origin = urlsplit(start)
    conn = http.client.HTTPConnection(origin.hostname, origin.port, timeout=30)
    seen = {start}
    level = [start]
    pages = OrderedDict()
    other = Counter()
    started = time.monotonic()
    with multiprocessing.Pool(processes) as pool:
        while level:
            jobs = []
            for url in level:
                parts = urlsplit(url)
                conn.request("GET", parts.path + ("?" + parts.query if parts.query else ""))
                resp = conn.getresponse()
                body = resp.read()
                ctype = resp.getheader("Content-Type", "")
                if resp.status != 200:
                    other[f"HTTP {resp.status}"] += 1
                    continue
                if ctype.split(";")[0].strip().lower() != "text/html":
                    other[ctype or "no Content-Type"] += 1
                    continue
                m = re.search(r"charset=([^;\s]+)", ctype, re.I)
                jobs.append((url, body, m.group(1).strip('"') if m else None))
            level = []
            for (url, _, _), (fields, links) in zip(jobs, pool.map(_parse_job, jobs, chunksize=4)):
                pages[url] = fields
                for link in links:
                    target = urldefrag(link)[0]
                    parts = urlsplit(target)
                    if parts.scheme in ("http", "https") and parts.netloc == origin.netloc and target not in seen:
                        seen.add(target)
                        level.append(target)
    conn.close()
    print(f"reference: {len(pages)} HTML pages parsed with html5lib in {time.monotonic() - started:.1f} s; "
          f"other URLs: {dict(other) or 'none'}; WHATWG links: "
          f"{'ada-url ' + ada_url.get_version() if ada_url else 'skipped (ada-url not installed)'}", file=log)
    return pages


def why_differ(href, joined, whatwg):
    """A short name for a case where urljoin and the WHATWG URL parser disagree."""
    if whatwg is None:
        return "href is not a valid URL for WHATWG"
    stripped = href.strip("\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13"
                          "\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
    if stripped != href:
        return "leading/trailing space or C0 control in the href (WHATWG strips it, urljoin keeps it)"
    if any(c in href for c in "\t\n\r"):
        return "tab or newline inside the href (WHATWG removes them)"
    if href.endswith("#") or whatwg.endswith("#") and not joined.endswith("#"):
        return "empty fragment '#' (WHATWG keeps it, urljoin drops it)"
    if whatwg.endswith("?") and not joined.endswith("?"):
        return "empty query '?' (WHATWG keeps it, urljoin drops it)"
    if whatwg == joined + "/":
        return "absolute URL with an empty path (WHATWG writes the path '/', urljoin writes none)"
    if "\\" in href:
        return "backslash (WHATWG reads it as '/' in http(s) URLs)"
    if any(ord(c) > 127 or c in ' "<>`{}' for c in href):
        return "a character WHATWG percent-encodes and urljoin keeps (space, \" < > ` { } or non-ASCII)"
    if whatwg.lower() == joined.lower():
        return "upper-case scheme or host (WHATWG lower-cases them)"
    if re.search(r":(80|443)(/|$)", joined):
        return "default port written out (WHATWG drops it)"
    if "/." in href:
        return "dot segments in an absolute URL (WHATWG removes them)"
    return "other"


def load_jsonl(path, forage):
    """{url: fields} of a Forage export or a Scrapy item feed, and the duplicate URLs."""
    rows, dupes = {}, Counter()
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            url = r["url"]
            fields = r["fields"] if forage else {k: v for k, v in r.items() if k != "url"}
            if url in rows:
                dupes[url] += 1
                if rows[url] != fields:
                    dupes[url + " (with other fields)"] += 1
            rows[url] = fields
    return rows, dupes


def compare(name, rows, ref, links_key="links", show=5, out=sys.stdout):
    """Compares a crawler's {url: fields} with the reference, field by field.
    Link values that differ only because the crawler made them absolute the
    other way (urljoin for the WHATWG reference, WHATWG for the urljoin one)
    are counted by case, not listed one by one.
    Returns (identical, link differences explained by urljoin vs WHATWG, other differences)."""
    missing = [u for u in ref if u not in rows]
    extra = [u for u in rows if u not in ref]
    diffs = []          # (url, field, crawler's, reference's)
    whatwg_cases = Counter()
    whatwg_examples = {}
    other_links = 0
    pages_differing = set()
    whatwg_pages = set()
    for url, want in ref.items():
        got = rows.get(url)
        if got is None:
            continue
        for field in ("title", "h1"):
            if got.get(field) != want[field]:
                diffs.append((url, field, got.get(field), want[field]))
                pages_differing.add(url)
        got_links, want_links = got.get("links"), want[links_key]
        if got_links == want_links:
            continue
        pages_differing.add(url)
        if not isinstance(got_links, list) or len(got_links) != len(want_links):
            got_links = got_links if isinstance(got_links, list) else []
            i = next((i for i, (g, w) in enumerate(zip(got_links, want_links)) if g != w),
                     min(len(got_links), len(want_links)))
            diffs.append((url, f"links ({len(got_links)} links, the reference {len(want_links)}; first difference "
                               f"at [{i}], href {want['hrefs'][i] if i < len(want_links) else None!r})",
                          got_links[i] if i < len(got_links) else None,
                          want_links[i] if i < len(want_links) else None))
            other_links += 1
            continue
        for i, (g, w) in enumerate(zip(got_links, want_links)):
            if g == w:
                continue
            href, joined, whatwg = want["hrefs"][i], want["links"][i], want["links_whatwg"] and want["links_whatwg"][i]
            if whatwg is not None and g == (whatwg if links_key == "links" else joined):
                case = why_differ(href, joined, whatwg)
                whatwg_cases[case] += 1
                whatwg_pages.add(url)
                whatwg_examples.setdefault(case, (url, href, joined, whatwg))
            else:
                other_links += 1
                diffs.append((url, f"links[{i}] (href {href!r})", g, w))
    identical = not missing and not extra and not pages_differing
    ref_name, other_name = ("WHATWG", "urljoin") if links_key == "links_whatwg" else ("urljoin", "WHATWG")
    print(f"{name} vs html5lib reference (links by {ref_name}): {len(rows)} records, {len(ref)} pages; "
          f"records identical: {'yes' if identical else 'no'}", file=out)
    if missing:
        print(f"  {len(missing)} pages without a record, e.g. {missing[:show]}", file=out)
    if extra:
        print(f"  {len(extra)} records of pages the reference does not have, e.g. {extra[:show]}", file=out)
    if whatwg_cases:
        print(f"  {sum(whatwg_cases.values())} link values differ where urljoin and WHATWG URL parsing disagree "
              f"({name} stores the {other_name} value) on {len(whatwg_pages)} pages:", file=out)
        for case, n in whatwg_cases.most_common():
            url, href, joined, whatwg = whatwg_examples[case]
            print(f"    {n:6} {case}: on {url} href {href!r} -> urljoin {joined!r}, WHATWG {whatwg!r}", file=out)
    if diffs:
        print(f"  {len(diffs)} other differences; the first {min(show, len(diffs))} "
              f"({name}'s value, then the reference's):", file=out)
        for url, field, g, w in diffs[:show]:
            print(f"    {url} {field}: {g!r} != {w!r}", file=out)
    return identical, sum(whatwg_cases.values()), len(diffs) + len(missing) + len(extra)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--start", required=True, help="the start URL of the served docs, e.g. http://127.0.0.1:PORT/index.html")
    ap.add_argument("--forage", help="a Forage export (forage export --out F.jsonl) of a crawl of this server")
    ap.add_argument("--scrapy", help="docs_spider.py's items (-O F.jsonl:jsonlines) from a crawl of this server")
    ap.add_argument("--show", type=int, default=5, help="differences printed per comparison")
    args = ap.parse_args()
    ref = build(args.start)
    ok = True
    for name, path, forage in (("forage", args.forage, True), ("scrapy", args.scrapy, False)):
        if not path:
            continue
        rows, dupes = load_jsonl(path, forage)
        if dupes:
            print(f"{name}: {sum(dupes.values())} duplicate records: {dict(dupes)}")
        same, _, other = compare(name, rows, ref, show=args.show)
        if ada_url:
            same_w, _, _ = compare(name, rows, ref, "links_whatwg", show=args.show)
            if forage:
                ok &= same_w
        elif forage:
            ok &= other == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
