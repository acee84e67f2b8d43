"""Parity-aware training (objective="parity") and the parity report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bytepair
from bytepair import _core
from bytepair import reference as R
from bytepair.cli import main
from bytepair.errors import TrainingError
from bytepair.inspect import parity
from conftest import optional

DATA = Path(__file__).parents[1] / "data"


def _script_lines(text: str, lo: int, hi: int) -> str:
    keep = []
    for line in text.splitlines():
        letters = [c for c in line if c.isalpha()]
        if letters and sum(lo <= ord(c) <= hi for c in letters) > 0.5 * len(letters):
            keep.append(line)
    return "\n".join(keep)


@pytest.fixture(scope="module")
def langs() -> dict:
    multi = (DATA / "multi_unicode.txt").read_text(encoding="utf-8")
    out = {
        "en": (DATA / "en_austen.txt").read_text(encoding="utf-8"),
        "ko": (DATA / "ko_prose.txt").read_text(encoding="utf-8"),
        "ru": _script_lines(multi, 0x400, 0x4FF),
        "hi": _script_lines(multi, 0x900, 0x97F),
    }
    assert all(len(t) > 3000 for t in out.values())
    return out


def _halves(t: str) -> tuple:
    cut = len(t) * 4 // 5
    return t[:cut], t[cut:]


def _tables(texts: dict, pattern):
    tabs, counts = [], []
    for t in texts.values():
        c = R.count_chunks([t], pattern)
        counts.append(c)
        tab = _core.ChunkTable()
        tab.add_items(list(c.items()))
        tabs.append(tab)
    return tabs, counts


@pytest.mark.parametrize("unit", ["bytes", "chars", "tokens"])
def test_core_equals_reference_on_small_real_corpora(langs, unit):
    train = {g: _halves(t[:6000])[0] for g, t in langs.items()}
    dev = {g: _halves(t[:6000])[1] for g, t in langs.items()}
    tabs, counts = _tables(train, "o200k")
    dtabs, dcounts = _tables(dev, "o200k")
    size = {"bytes": lambda t: len(t.encode()), "chars": len, "tokens": lambda t: 1}[unit]
    sizes = {g: size(dev[g]) for g in langs}
    want, chosen = R.train_parity_from_counts(dict(zip(langs, counts)), dict(zip(langs, dcounts)), sizes, 150)
    got, who = _core.parity_merges(tabs, dtabs, [sizes[g] for g in langs], 150)
    assert [tuple(m) for m in got] == want and len(want) == 150
    assert [list(langs)[i] for i in who] == chosen
    assert len(set(chosen)) >= 3  # more than one language chose


def test_core_equals_reference_with_limits(langs):
    train = {g: t[:3000] for g, t in langs.items()}
    tabs, counts = _tables(train, "gpt2")
    sizes = {g: len(t.encode()) for g, t in train.items()}
    for min_f, max_len in [(4, None), (1, 3)]:
        want, chosen = R.train_parity_from_counts(dict(zip(langs, counts)), dict(zip(langs, counts)), sizes, 120,
                                                  min_frequency=min_f, max_token_length=max_len)
        got, who = _core.parity_merges(tabs, tabs, list(sizes.values()), 120, min_f, max_len)
        assert [tuple(m) for m in got] == want
        assert [list(langs)[i] for i in who] == chosen


def test_public_api_matches_the_reference(langs):
    train = {g: t[:4000] for g, t in langs.items()}
    tok = bytepair.train(None, 256 + 100 + 1, languages=train, objective="parity", special_tokens=["<|endoftext|>"],
                         pattern="cl100k")
    counts = {g: R.count_chunks([t], "cl100k", ["<|endoftext|>"]) for g, t in train.items()}
    sizes = {g: sum(len(c) * n for c, n in counts[g].items()) for g in train}
    want, _ = R.train_parity_from_counts(counts, counts, sizes, 100)
    assert tok.merges == want and tok.special_tokens == {"<|endoftext|>": 356}


def test_one_language_is_frequency_training(langs):
    ko = langs["ko"]
    a = bytepair.train(None, 1200, languages={"ko": ko}, objective="parity", dev={"ko": ko[:2000]})
    b = bytepair.train(ko, 1200)
    assert a == b and a.merges == b.merges


def test_frequency_is_still_the_default(langs):
    data = langs["en"] + langs["ko"]
    assert bytepair.train(data, 700) == bytepair.train(data, 700, objective="frequency")


def test_parity_lowers_inequality(langs):
    split = {g: _halves(t) for g, t in langs.items()}
    train = {g: a for g, (a, _) in split.items()}
    dev = {g: b for g, (_, b) in split.items()}
    size = 2000
    std = bytepair.train(list(train.values()), size, pattern="o200k")
    par = bytepair.train(None, size, languages=train, dev=dev, objective="parity")
    report = parity({"standard": std, "parity": par}, dev)
    assert report.gini("parity") < 0.5 * report.gini("standard")
    worst_std, worst_par = report.worst("standard"), report.worst("parity")
    assert worst_par.tokens_per_byte < worst_std.tokens_per_byte


def test_bad_input(langs):
    en, ko = langs["en"][:2000], langs["ko"][:2000]
    with pytest.raises(TrainingError, match="dev names language 'ja'"):
        bytepair.train(None, 400, languages={"en": en, "ko": ko}, dev={"en": en, "ko": ko, "ja": ko},
                       objective="parity")
    with pytest.raises(TrainingError, match="'ko' has no dev data"):
        bytepair.train(None, 400, languages={"en": en, "ko": ko}, dev={"en": en}, objective="parity")
    with pytest.raises(TrainingError, match="training text of language 'ko' is empty"):
        bytepair.train(None, 400, languages={"en": en, "ko": ""}, objective="parity")
    with pytest.raises(TrainingError, match="dev text of language 'en' is empty"):
        bytepair.train(None, 400, languages={"en": en, "ko": ko}, dev={"en": [], "ko": ko}, objective="parity")
    with pytest.raises(TrainingError, match="objective must be"):
        bytepair.train(en, 400, objective="fair")
    with pytest.raises(TrainingError, match="parity_unit"):
        bytepair.train(None, 400, languages={"en": en}, objective="parity", parity_unit="words")
    with pytest.raises(TrainingError, match="non-empty dict"):
        bytepair.train(None, 400, languages={}, objective="parity")
    with pytest.raises(TypeError, match="not on data"):
        bytepair.train(en, 400, languages={"en": en}, objective="parity")
    with pytest.raises(TypeError, match="for objective='parity'"):
        bytepair.train(en, 400, languages={"en": en})


# ---------------------------------------------------------------- the report


def test_report_numbers():
    texts = {"en": "The cat sat on the mat.", "ko": "고양이가 매트 위에 앉았다."}
    r = parity(["gpt2", "o200k_base"], texts, unit="tokens")
    for t in ("gpt2", "o200k_base"):
        enc = bytepair.get_encoding(t)
        row = r.row(t, "ko")
        assert row.tokens == len(enc.encode(texts["ko"]))
        assert row.tokens_per_byte == row.tokens / len(texts["ko"].encode())
        assert row.tokens_per_char == row.tokens / len(texts["ko"])
        assert r.relative(t, "ko") == row.tokens / r.row(t, "en").tokens
        assert r.gini(t) == R.gini([r.row(t, "en").tokens, r.row(t, "ko").tokens])
    assert r.gini("o200k_base") < r.gini("gpt2")
    d = r.to_dict()
    assert d["tokenizers"][0]["languages"]["ko"]["tokens"] == r.row("gpt2", "ko").tokens
    assert "gini" in r.to_text()
    with pytest.raises(ValueError, match="empty"):
        parity(["gpt2"], {"en": ""})


def test_gini():
    assert R.gini([2.0, 2.0, 2.0]) == 0.0
    assert R.gini([1.0, 3.0]) == pytest.approx(0.25)
    assert bytepair.inspect.parity is parity


# ---------------------------------------------------------------- CLI


def test_cli_parity_and_train(tmp_path, capsys, langs):
    files = {}
    for g, t in langs.items():
        a, b = _halves(t)
        files[g] = (tmp_path / f"{g}.txt", tmp_path / f"{g}_dev.txt")
        files[g][0].write_text(a, encoding="utf-8")
        files[g][1].write_text(b, encoding="utf-8")
    out = tmp_path / "par.json"
    argv = ["train", "--vocab-size", "1500", "-q", "-o", str(out), "--parity"]
    argv += [f"{g}={p[0]}" for g, p in files.items()] + ["--dev"] + [f"{g}={p[1]}" for g, p in files.items()]
    assert main(argv) == 0
    msg = capsys.readouterr().out
    assert "merges chosen by: en " in msg and "on the dev texts:" in msg and "gini" in msg
    tok = bytepair.load(out)
    want = bytepair.train(None, 1500, languages={g: p[0] for g, p in files.items()},
                          dev={g: p[1] for g, p in files.items()}, objective="parity",
                          special_tokens=["<|endoftext|>"])
    assert tok == want
    argv = ["parity", "-e", "gpt2", "-t", str(out), "--json"] + [f"--lang={g}={p[1]}" for g, p in files.items()]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in d["tokenizers"]] == ["gpt2", "par.json"]
    assert d["tokenizers"][1]["gini"] < d["tokenizers"][0]["gini"]
    assert main(["parity", "-e", "gpt2", "--lang", "en"]) == 2
    assert "LANG=FILE" in capsys.readouterr().err
    assert main(["train", "--dev", f"en={files['en'][1]}"]) == 2
    optional("matplotlib")
    png = tmp_path / "parity.png"
    assert main(["parity", "-e", "gpt2", "--lang", f"en={files['en'][1]}", "--lang", f"ko={files['ko'][1]}",
                 "--plot", str(png)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_hybrid_core_equals_reference(langs):
    train = {g: t[:3000] for g, t in langs.items()}
    tabs, counts = _tables(train, "o200k")
    sizes = {g: len(t.encode()) for g, t in train.items()}
    want, chosen = R.train_parity_from_counts(dict(zip(langs, counts)), dict(zip(langs, counts)), sizes, 120,
                                              global_merges=40)
    got, who = _core.parity_merges(tabs, tabs, list(sizes.values()), 120, 1, None, None, 40)
    assert [tuple(m) for m in got] == want
    names = list(langs) + ["*"]
    assert [names[i] for i in who] == chosen and chosen[:40] == ["*"] * 40 and "*" not in chosen[40:]
    # the pooled phase is standard BPE on the languages concatenated
    pooled = bytepair.train([train[g] for g in langs], 256 + 40, pattern="o200k")
    assert want[:40] == pooled.merges
    tok = bytepair.train(None, 256 + 120, languages=train, objective="parity", parity_global_merges=40)
    assert tok.merges == want


def test_cli_hybrid(tmp_path, capsys, langs):
    en, ko = tmp_path / "en.txt", tmp_path / "ko.txt"
    en.write_text(langs["en"], encoding="utf-8")
    ko.write_text(langs["ko"], encoding="utf-8")
    out = tmp_path / "h.json"
    assert main(["train", "--parity", f"en={en}", f"ko={ko}", "--parity-global", "30", "--vocab-size", "400",
                 "-q", "-o", str(out)]) == 0
    assert "merges chosen by: all pooled 30, en " in capsys.readouterr().out
    want = bytepair.train(None, 400, languages={"en": en, "ko": ko}, objective="parity", parity_global_merges=30,
                          special_tokens=["<|endoftext|>"])
    assert bytepair.load(out) == want
