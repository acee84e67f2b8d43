"""The page of ``bytepair serve`` in a real browser (headless Chromium driven by
selenium): type Korean and English, and check what a user sees against the
library. One screenshot per tab goes to $BYTEPAIR_TEST_ARTIFACTS (default: a
pytest temp folder); its path is printed.

Skipped, with the reason, only when selenium or a Chromium + chromedriver is
missing; BYTEPAIR_REQUIRE_BROWSER=1 (set by .ci/run) turns that into a failure.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bytepair import get_encoding
from bytepair.inspect import compare, pieces, show_bytes, trace, visible

NAMES = ["gpt2", "cl100k_base", "o200k_base"]
REQUIRE = os.environ.get("BYTEPAIR_REQUIRE_BROWSER") == "1"


def _unavailable(reason: str):
    if REQUIRE:
        pytest.fail(f"{reason} (BYTEPAIR_REQUIRE_BROWSER=1 asks for the browser tests to run)")
    pytest.skip(reason)


def _find(env: str, names: list[str], extra: list[str]) -> str | None:
    if os.environ.get(env):
        return os.environ[env]
    for n in names:
        p = shutil.which(n)
        if p:
            return p
    return next((p for p in extra if os.path.exists(p)), None)


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    d = Path(os.environ.get("BYTEPAIR_TEST_ARTIFACTS") or tmp_path_factory.mktemp("serve-screenshots"))
    d.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots of bytepair serve: {d}")
    return d


@contextlib.contextmanager
def served_page(tokenizers: dict) -> Iterator:
    """A headless Chromium (selenium) showing ``bytepair serve`` of
    ``tokenizers``, the page open and settled; skips (or fails, see the module
    docstring) when selenium, the serve extra or the browser is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed (pip install selenium)")
    try:
        from bytepair.serve import Server
    except ImportError as e:
        _unavailable(f"the serve extra is not installed ({e})")
    chromium = _find("BYTEPAIR_CHROMIUM", ["chromium", "chromium-browser", "google-chrome"], [])
    driver_path = _find("BYTEPAIR_CHROMEDRIVER", ["chromedriver"], ["/usr/lib/chromium/chromedriver"])
    if not chromium or not driver_path:
        _unavailable(f"no headless browser: chromium {chromium or 'missing'}, chromedriver {driver_path or 'missing'}"
                     " (Debian: apt-get install chromium chromium-driver)")
    opts = Options()
    opts.binary_location = chromium
    for a in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1400,1000",
              "--lang=en-US", "--no-first-run", "--disable-extensions"]:
        opts.add_argument(a)
    with Server(tokenizers) as server:
        driver = webdriver.Chrome(options=opts, service=Service(driver_path))
        try:
            driver.set_page_load_timeout(30)
            driver.url_base = server.url  # type: ignore[attr-defined]
            open_page(driver)
            yield driver
        finally:
            driver.quit()


@pytest.fixture(scope="module")
def page():
    with served_page({n: get_encoding(n) for n in NAMES}) as driver:
        yield driver


def open_page(driver, fragment: str = "") -> None:
    driver.get(driver.url_base + fragment)
    wait_idle(driver, started=True)


def wait_idle(driver, started: bool = False, timeout: float = 20) -> None:
    """Waits until the page has no request pending or scheduled."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        ready = driver.execute_script("return !!(window.bytepair && window.bytepair.state.info)") if started else True
        if ready and driver.execute_script("return window.bytepair.idle()"):
            return
        time.sleep(0.05)
    raise AssertionError("the page did not settle")


def css(driver, sel):
    return driver.find_elements("css selector", sel)


def one(driver, sel):
    return driver.find_element("css selector", sel)


def tab(driver, name):
    one(driver, f"#tab-{name}").click()
    assert one(driver, f"#panel-{name}").is_displayed()


def column_checks(col, tok, text):
    ids = tok.encode(text, disallowed_special=())
    p = pieces(tok, text)
    # the count shown is encode's, and it is the number of coloured spans, one per id in order
    assert col.get_attribute("data-count") == str(len(ids))
    assert col.find_element("css selector", ".stat-count").text.replace(",", "") == str(len(ids))
    spans = col.find_elements("css selector", ".view span.tok")
    assert len(spans) == len(ids)
    assert [int(s.get_attribute("data-id")) for s in spans] == ids
    partial = col.find_elements("css selector", ".view span.tok.partial")
    assert len(partial) == sum(not x.complete for x in p.pieces)
    assert col.find_element("css selector", ".stat-partial").text == str(len(partial))
    # every partial token shows its bytes as the library writes them, under the character it belongs to
    for s in partial:
        b = bytes.fromhex(s.get_attribute("data-hex"))
        assert "\\x" in s.text and s.text == visible(show_bytes(b)).replace(" ", "·")
        assert s.find_element("xpath", "ancestor::ruby")
    return spans


def test_tokens_tab_typing_korean_and_english(page, artifacts):
    tab(page, "tokens")
    box = one(page, "#tokens-text")
    box.clear()
    typed = "Hello, world! 안녕하세요, 토크나이저입니다."
    box.send_keys(typed)
    wait_idle(page)
    assert box.get_attribute("value") == typed
    cols = css(page, "#tokens-out .col")
    assert [c.get_attribute("data-tokenizer") for c in cols] == NAMES
    for col, name in zip(cols, NAMES):
        column_checks(col, get_encoding(name), typed)
    # gpt2 spells Hangul in byte pieces; o200k_base has whole syllables
    assert len(cols[0].find_elements("css selector", ".partial")) > len(cols[2].find_elements("css selector", ".partial"))
    # it follows as you type, newlines included (shown, and still breaking the line)
    box.send_keys("\nSecond line:  two spaces")
    wait_idle(page)
    text = typed + "\nSecond line:  two spaces"
    for col, name in zip(css(page, "#tokens-out .col"), NAMES):
        column_checks(col, get_encoding(name), text)
    view = one(page, "#tokens-out .col .view")
    marks = [w.text for w in view.find_elements("css selector", ".ws")]
    assert "↵" in marks and marks.count("·") >= text.count(" ")
    page.save_screenshot(str(artifacts / "tokens.png"))


def test_share_link_restores_text_and_tokenizers(page):
    tab(page, "tokens")
    box = one(page, "#tokens-text")
    box.clear()
    box.send_keys("공유 링크 share link")
    wait_idle(page)
    for c in css(page, "#tokens-choices input"):
        if c.get_attribute("value") != "cl100k_base":
            c.click()
    wait_idle(page)
    one(page, "#tokens-share").click()
    link = one(page, "#tokens-link").get_attribute("value")
    assert link.startswith(page.url_base) and "tok=cl100k_base" in link
    page.get("about:blank")
    page.get(link)
    wait_idle(page, started=True)
    assert one(page, "#tokens-text").get_attribute("value") == "공유 링크 share link"
    cols = css(page, "#tokens-out .col")
    assert [c.get_attribute("data-tokenizer") for c in cols] == ["cl100k_base"]
    column_checks(cols[0], get_encoding("cl100k_base"), "공유 링크 share link")
    open_page(page)  # back to the default page for the other tests


def run_training(page, pattern: str, merges: int) -> None:
    """Trains on the train tab's text with ``pattern`` and ``merges``, and waits for the steps."""
    from selenium.webdriver.support.ui import Select

    Select(one(page, "#train-pattern")).select_by_value(pattern)
    box = one(page, "#train-merges")
    box.clear()
    box.send_keys(str(merges))
    one(page, "#train-run").click()
    wait_idle(page)


def test_train_tab_steps_equal_inspect_trace(page, artifacts):
    tab(page, "train")
    text = "low lower lowest newer newest 낮은 더 낮은 가장 낮은"
    box = one(page, "#train-text")
    box.clear()
    box.send_keys(text)
    run_training(page, "gpt2", 12)
    want = trace(text, 12, pattern="gpt2")
    rows = css(page, "#train-steps tbody tr")
    assert len(rows) == len(want.steps) == 12
    for row, s in zip(rows, want.steps):
        cells = [td.text for td in row.find_elements("css selector", "td")]
        assert cells[0] == str(s.merge) and cells[1] == str(s.id)
        assert cells[4] == str(s.count) and cells[5] == str(s.num_tokens)

    def shown():
        spans = css(page, "#train-view span.tok")
        return [bytes.fromhex(x.get_attribute("data-hex")) for x in spans]

    # the page opens on the last step: the text after the last merge, as inspect.trace has it
    assert shown() == want.steps[-1].tokens
    assert one(page, "#train-label").get_attribute("data-tokens") == str(want.steps[-1].num_tokens)
    assert css(page, "#train-view .partial")  # Hangul bytes not merged yet are marked
    page.save_screenshot(str(artifacts / "train.png"))
    one(page, "#train-first").click()
    assert shown() == want.start_tokens
    one(page, "#train-next").click()
    assert shown() == want.steps[0].tokens
    rows[6].click()
    assert shown() == want.steps[6].tokens
    assert "current" in css(page, "#train-steps tbody tr")[6].get_attribute("class")
    new = [bytes.fromhex(x.get_attribute("data-hex")) for x in css(page, "#train-view span.tok.new")]
    assert new and all(b == want.steps[6].token for b in new)


def test_train_upload_and_download(page, tmp_path):
    from bytepair import load

    tab(page, "train")
    corpus_file = tmp_path / "corpus.txt"
    text = "banana bandana 바나나 반다나 " * 3
    corpus_file.write_text(text, encoding="utf-8")
    one(page, "#train-file").send_keys(str(corpus_file))
    end = time.monotonic() + 10
    while one(page, "#train-text").get_attribute("value") != text and time.monotonic() < end:
        time.sleep(0.05)
    assert one(page, "#train-text").get_attribute("value") == text
    run_training(page, "o200k", 8)
    want = trace(text, 8, pattern="o200k")
    assert [bytes.fromhex(x.get_attribute("data-hex")) for x in css(page, "#train-view span.tok")] == \
        want.steps[-1].tokens
    folder = tmp_path / "downloads"
    folder.mkdir()
    page.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})
    one(page, "#train-download").click()
    target = folder / "tokenizer.bytepair.json"
    end = time.monotonic() + 15
    while not target.exists() and time.monotonic() < end:
        time.sleep(0.1)
    assert target.exists(), list(folder.iterdir())
    tok = load(target)
    assert [tok.decode_single_token_bytes(256 + k) for k in range(8)] == [s.token for s in want.steps]


def test_compare_tab_bars(page, artifacts):
    tab(page, "compare")
    one(page, "#compare-run").click()
    wait_idle(page)
    rows = css(page, "#compare-texts .ctext")
    texts = {r.find_element("css selector", "input").get_attribute("value"):
             r.find_element("css selector", "textarea").get_attribute("value") for r in rows}
    assert len(texts) >= 6 and "Korean" in texts
    want = compare(texts, {n: get_encoding(n) for n in NAMES})
    first = next(iter(texts))
    bars = css(page, "#compare-chart .bar")
    assert len(bars) == len(texts) * len(NAMES)
    widths = {}
    for b in bars:
        label, name = b.get_attribute("data-text"), b.get_attribute("data-tokenizer")
        ratio = want.ratio(label, first, name)
        assert float(b.get_attribute("data-ratio")) == pytest.approx(ratio)
        assert int(b.get_attribute("data-tokens")) == want.row(label, name).tokens
        widths[(label, name)] = b.size["width"]
        shown = b.find_element("xpath", "../..").find_element("css selector", ".ratio").text
        assert abs(float(shown.split("×")[0]) - ratio) <= 0.0051  # shown with two decimals
    # longer bars for costlier texts, within each tokenizer
    for name in NAMES:
        order = sorted(texts, key=lambda t: want.ratio(t, first, name))
        assert widths[(order[0], name)] <= widths[(order[-1], name)]
    assert widths[("Korean", "gpt2")] > widths[("Korean", "o200k_base")]
    page.save_screenshot(str(artifacts / "compare.png"))


def test_everything_came_from_the_server(page):
    names = page.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert names and all(n.startswith((page.url_base, "data:")) for n in names), names
    errors = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def test_bad_input_shows_the_servers_message(page):
    tab(page, "train")
    merges = one(page, "#train-merges")
    merges.clear()
    merges.send_keys("999999")
    one(page, "#train-run").click()
    wait_idle(page)
    err = one(page, "#error")
    assert err.is_displayed() and "'merges' must be between 1 and" in err.text
    merges.clear()
    merges.send_keys("3")
    one(page, "#train-run").click()
    wait_idle(page)
    assert not one(page, "#error").is_displayed()
