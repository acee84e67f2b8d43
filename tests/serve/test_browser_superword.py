"""The playground's token view marks superword tokens (tokens crossing a
space, ``bytepair.superword.superword_tokens``) in a real browser, for a
superword tokenizer next to a plain one. Skipped like tests/serve/test_browser.py
when no browser is installed."""

from __future__ import annotations

import warnings

import pytest
from test_browser import _find, _unavailable, css, one, open_page, tab, wait_idle

import bytepair
from bytepair import get_encoding
from bytepair.superword import superword_tokens
from conftest import CORPORA, corpus


@pytest.fixture(scope="module")
def superword():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bytepair.train("".join(corpus(n) for n in CORPORA[:3]), 3000, superword=0.5)


@pytest.fixture(scope="module")
def page(superword):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service

        from bytepair.serve import Server
    except ImportError as e:
        _unavailable(f"selenium or the serve extra is not installed ({e})")
    chromium = _find("BYTEPAIR_CHROMIUM", ["chromium", "chromium-browser", "google-chrome"], [])
    driver_path = _find("BYTEPAIR_CHROMEDRIVER", ["chromedriver"], ["/usr/lib/chromium/chromedriver"])
    if not chromium or not driver_path:
        _unavailable(f"no headless browser: chromium {chromium or 'missing'}, chromedriver {driver_path or 'missing'}")
    opts = Options()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000"]:
        opts.add_argument(a)
    with Server({"superword": superword, "gpt2": get_encoding("gpt2")}) as server:
        driver = webdriver.Chrome(options=opts, service=Service(driver_path))
        try:
            driver.set_page_load_timeout(30)
            driver.url_base = server.url  # type: ignore[attr-defined]
            open_page(driver)
            yield driver
        finally:
            driver.quit()


def test_superword_tokens_are_marked(page, superword):
    tab(page, "tokens")
    box = one(page, "#tokens-text")
    box.clear()
    text = "It is a truth universally acknowledged, that a single man in possession of a good fortune.\n" \
           "And the LORD said unto Moses: the king of Israel"
    box.send_keys(text)
    wait_idle(page)
    sw_ids = set(superword_tokens(superword))
    for col in css(page, "#tokens-out .col"):
        name = col.get_attribute("data-tokenizer")
        tok = superword if name == "superword" else get_encoding(name)
        ids = tok.encode_ordinary(text)
        spans = col.find_elements("css selector", ".view span.tok")
        assert [int(s.get_attribute("data-id")) for s in spans] == ids
        marked = [int(s.get_attribute("data-id")) for s in col.find_elements("css selector", ".view span.tok.superword")]
        want = [i for i in ids if i in sw_ids] if name == "superword" else []
        assert marked == want, name
        assert col.find_element("css selector", ".stat-superword").text == str(len(want))
        if name == "superword":
            assert len(want) >= 3, "the text should hold superwords of this tokenizer"
            first = col.find_element("css selector", ".view span.tok.superword")
            assert "superword" in first.get_attribute("title")
            assert first.value_of_css_property("border-bottom-style") == "double"
        else:
            assert not any(len(tok.decode_single_token_bytes(i).split()) >= 2 for i in ids)
