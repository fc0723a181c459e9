"""Scrapy's side of the docs crawl benchmark: the same crawl as Forage's config.

Written the way Scrapy users write a site crawl: a LinkExtractor(unique=True)
follows every same-host link, and every page gives one item with its URL,
title, first h1 and the href of every link, made absolute.

Run by docs_bench.py:
    scrapy runspider docs_spider.py -a start=http://127.0.0.1:PORT/index.html -O items.jsonl
"""
from urllib.parse import urlparse

import scrapy
from scrapy.linkextractors import LinkExtractor


class DocsSpider(scrapy.Spider):
    name = "docs"

    def __init__(self, start=None, **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.netloc = urlparse(start).netloc
        self.allowed_domains = [urlparse(start).hostname]
        # LinkExtractor(allow_domains=) compares host:port with the domain, so
        # same-host filtering is done here (as in shop_spider.py).
        self.links = LinkExtractor(unique=True)

    def parse(self, response):
        yield {
            "url": response.url,
            # normalize-space(): the element's whole text (the h1's "¶"
            # permalink included), whitespace runs collapsed, ends trimmed.
            "title": response.xpath("normalize-space(//title)").get(),
            "h1": response.xpath("normalize-space(//h1)").get(),
            "links": [response.urljoin(href) for href in response.css("a::attr(href)").getall()],
        }
        for link in self.links.extract_links(response):
            if urlparse(link.url).netloc == self.netloc:
                yield response.follow(link.url, self.parse)
