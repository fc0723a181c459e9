#!/usr/bin/env python3
"""Write the same pages in UTF-8, Shift_JIS and GBK for the encoding benchmark.

    python3 Benchmarks/encoding/make_encoded_pages.py OUT [--source DIR] [--generated N] [--seed S]

Makes three sets under OUT, each with a folder per encoding (utf-8/, shift_jis/,
gbk/) holding the same pages, so `forage-bench parse` can time each folder:

  OUT/real/       the pages of DIR (default ../shared/testdata/html-pages) that
                  hold real CJK text (at least 500 kana or ideographs)
  OUT/all/        every UTF-8 page of DIR (mostly English: decoding is then
                  mostly the ASCII fast path)
  OUT/generated/  N generated pages (default 60) of Japanese-style text (kana
                  and JIS level-1 kanji) and Chinese-style text (the same
                  ideographs), 6-60 KB each, about 70% of their UTF-8 bytes CJK

The three versions of a page hold the same text: a character that Shift_JIS
(Python's cp932, the Encoding Standard's Shift_JIS) or GBK cannot encode becomes
a numeric character reference (&#NNN;) in all three, and each page's own charset
declarations are replaced by one <meta charset> naming its encoding, placed
right after the DOCTYPE (so the prescan finds it and the quirks mode is kept).
Nothing is written into the repository: OUT is a scratch folder.
"""
import argparse
import os
import random
import re

ENCODINGS = [("utf-8", "utf-8", "UTF-8"), ("shift_jis", "cp932", "Shift_JIS"), ("gbk", "gbk", "GBK")]

META_CHARSET = re.compile(rb"<meta[^>]*charset[^>]*>", re.IGNORECASE)
DOCTYPE = re.compile(r"^\s*<!doctype[^>]*>", re.IGNORECASE)


def encodable(c, cache={}):
    ok = cache.get(c)
    if ok is None:
        try:
            c.encode("cp932")
            c.encode("gbk")
            ok = True
        except UnicodeEncodeError:
            ok = False
        cache[c] = ok
    return ok


def common_text(text):
    """`text` with every character outside cp932 ∩ GBK as a character reference."""
    return "".join(c if c < "\x80" or encodable(c) else f"&#{ord(c)};" for c in text)


def write_versions(out, name, text):
    """Writes `text` (charset declarations already removed) in each encoding."""
    m = DOCTYPE.match(text)
    cut = m.end() if m else 0
    for folder, codec, label in ENCODINGS:
        page = text[:cut] + f'<meta charset="{label}">' + text[cut:]
        with open(os.path.join(out, folder, name), "wb") as f:
            f.write(page.encode(codec))


def cjk_count(text):
    return sum(1 for c in text if "\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff")


def from_source(source, out_all, out_real):
    for name in sorted(os.listdir(source)):
        if not name.lower().endswith(".html"):
            continue
        with open(os.path.join(source, name), "rb") as f:
            raw = f.read()
        try:
            text = META_CHARSET.sub(b"", raw).decode("utf-8")
        except UnicodeDecodeError:
            continue
        text = common_text(text)
        write_versions(out_all, name, text)
        if cjk_count(text) >= 500:
            write_versions(out_real, name, text)


def alphabet():
    """Hiragana, katakana and the JIS X 0208 level-1 kanji that GBK also has."""
    kana = [chr(c) for c in range(0x3041, 0x3094)] + [chr(c) for c in range(0x30A1, 0x30F7)]
    kanji = []
    for lead in range(0x88, 0x99):
        for trail in list(range(0x40, 0x7F)) + list(range(0x80, 0xFD)):
            try:
                c = bytes([lead, trail]).decode("cp932")
            except UnicodeDecodeError:
                continue
            if "\u4e00" <= c <= "\u9fff" and encodable(c):
                kanji.append(c)
    return kana, kanji


def generated(out, count, seed):
    rng = random.Random(seed)
    kana, kanji = alphabet()
    punct = "、。「」・ー（）"

    def sentence(japanese):
        words = []
        for _ in range(rng.randint(6, 14)):
            if japanese:
                w = "".join(rng.choice(kanji) for _ in range(rng.randint(1, 3)))
                w += "".join(rng.choice(kana[:83]) for _ in range(rng.randint(1, 3)))
            else:
                w = "".join(rng.choice(kanji) for _ in range(rng.randint(1, 4)))
            words.append(w)
            if rng.random() < 0.15:
                words.append(rng.choice(punct[:2]))
        return "".join(words) + "。"

    for n in range(count):
        japanese = n % 2 == 0
        lang = "ja" if japanese else "zh"
        title = sentence(japanese)[:20]
        parts = [f'<!DOCTYPE html>\n<html lang="{lang}">\n<head>\n<title>{title}</title>\n'
                 '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                 '<link rel="stylesheet" href="/css/site.css">\n</head>\n<body>\n'
                 '<header><nav class="top"><ul>\n']
        for k in range(8):
            parts.append(f'<li><a href="/c/{k}">{sentence(japanese)[:6]}</a></li>\n')
        parts.append('</ul></nav></header>\n<main id="main">\n'
                     f'<article class="post"><h1 class="title">{title}</h1>\n'
                     f'<p class="meta">2026年{rng.randint(1, 12)}月{rng.randint(1, 28)}日 '
                     f'<span class="author">{sentence(japanese)[:4]}</span></p>\n')
        for _ in range(rng.randint(4, 60)):
            body = "".join(sentence(japanese) for _ in range(rng.randint(2, 6)))
            if rng.random() < 0.3:
                cut = rng.randrange(len(body))
                body = body[:cut] + f'<a href="/p/{rng.randint(1, 9999)}">' + sentence(japanese)[:8] + "</a>" + body[cut:]
            if rng.random() < 0.2:
                body = f"<strong>{sentence(japanese)[:10]}</strong>" + body
            parts.append(f"<p>{body}</p>\n")
        parts.append('<table class="spec">\n')
        for _ in range(rng.randint(3, 10)):
            parts.append(f"<tr><th>{sentence(japanese)[:4]}</th><td>{sentence(japanese)[:16]} "
                         f"{rng.randint(1, 999)}円</td></tr>\n")
        parts.append("</table>\n</article>\n</main>\n<footer><p>&copy; 2026 "
                     f"{sentence(japanese)[:8]}</p></footer>\n</body>\n</html>\n")
        text = "".join(parts)
        write_versions(out, f"{n:03d}.html", text)


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="scratch folder to write into")
    ap.add_argument("--source", default=os.path.join(root, "..", "shared", "testdata", "html-pages"))
    ap.add_argument("--generated", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    sets = {s: os.path.join(args.out, s) for s in ("real", "all", "generated")}
    for path in sets.values():
        for folder, _, _ in ENCODINGS:
            os.makedirs(os.path.join(path, folder), exist_ok=True)
    from_source(args.source, sets["all"], sets["real"])
    generated(sets["generated"], args.generated, args.seed)
    for set_name, path in sets.items():
        sizes = [sum(os.path.getsize(os.path.join(path, f, n)) for n in os.listdir(os.path.join(path, f)))
                 for f, _, _ in ENCODINGS]
        files = len(os.listdir(os.path.join(path, "utf-8")))
        print(f"{set_name}: {files} pages; " + ", ".join(f"{f} {s:,} B" for (f, _, _), s in zip(ENCODINGS, sizes)))


if __name__ == "__main__":
    main()
