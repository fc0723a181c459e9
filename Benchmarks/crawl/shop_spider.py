"""Scrapy's side of the crawl benchmark: the same crawl as Forage's config.

Follows every same-host link (utm_ parameters removed, as Forage's
canonicalization does), and yields one item per product page.
"""
import re
from urllib.parse import urlparse

import scrapy
from scrapy.linkextractors import LinkExtractor
from w3lib.url import url_query_cleaner

UTM = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]


def strip_utm(url):
    return url_query_cleaner(url, UTM, remove=True)


def first_number(text):
    if not text:
        return None
    m = re.search(r"\d[\d,.]*", text)
    if not m:
        return None
    token = m.group(0).rstrip(",.")
    if token.count(",") == 1 and "." not in token and len(token.split(",")[1]) <= 2:
        token = token.replace(",", ".")
    else:
        token = token.replace(",", "")
    return float(token)


class ShopSpider(scrapy.Spider):
    name = "shop"

    def __init__(self, start=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.netloc = urlparse(start).netloc
        self.allowed_domains = [urlparse(start).hostname]
        # LinkExtractor(allow_domains=) compares host:port with the domain, so
        # same-host filtering is done here.
        self.links = LinkExtractor(process_value=strip_utm, unique=True)

    def parse(self, response):
        product = response.css("div.product")
        if product:
            yield {
                "sku": product.attrib.get("data-sku"),
                "title": " ".join(" ".join(response.css("h1.product-title ::text").getall()).split()),
                "price": first_number(response.css("span.price ::text").get()),
            }
        for link in self.links.extract_links(response):
            if urlparse(link.url).netloc == self.netloc:
                yield response.follow(link.url, self.parse)
