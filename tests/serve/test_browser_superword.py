"""The playground's token view marks superword tokens (tokens crossing a
space, ``bytepair.superword.superword_tokens``) in a real browser, for a
superword tokenizer next to a plain one. Skipped like tests/serve/test_browser.py
when no browser is installed."""

from __future__ import annotations

import warnings

import pytest
from test_browser import css, one, served_page, tab, wait_idle

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
    with served_page({"superword": superword, "gpt2": get_encoding("gpt2")}) as driver:
        yield driver


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
