"""bytepair.inspect.audit on hand-built vocabularies where the answer is known,
and on the bundled encodings (every witness re-checked by encoding it)."""

from __future__ import annotations

import random

import pytest

from bytepair import Tokenizer, get_encoding
from bytepair.inspect import audit as inspect_audit
from bytepair.inspect.audit import audit, duplicates, merge_without_shortcut
from bytepair.inspect.witnesses import in_utf8_text
from conftest import corpus

BYTES = [bytes([i]) for i in range(256)]


def tok(extra, pattern="gpt2"):
    return Tokenizer(BYTES + [bytes(x) for x in extra], pattern=pattern)


def by_text(a, t):
    return next(x for x in a.tokens if x.bytes == t)


def check_witnesses(t, a):
    for x in a.tokens:
        if x.status in ("whole-piece", "merges"):
            assert x.witness is not None
            assert x.id in t.encode_ordinary(x.witness), (x, t.encode_ordinary(x.witness))
        else:
            assert x.witness is None and x.reason


def test_inspect_exports_audit():
    assert inspect_audit is audit


def test_no_pretokenizer_every_text_token_is_a_whole_piece():
    t = tok([b"ab", b"b c", b"\xff\xfe"], pattern=None)
    a = audit(t)
    check_witnesses(t, a)
    assert by_text(a, b"b c").status == "whole-piece"  # with no pattern a space is no boundary
    bad = by_text(a, b"\xff\xfe")
    assert bad.status == "unreachable" and "never occur in UTF-8" in bad.reason and "\\xff" in bad.reason


def test_split_by_pattern_and_not_rebuilt_is_unreachable():
    t = tok([b"ab", b"a b"])
    a = audit(t)
    x = by_text(a, b"a b")
    assert (x.status, x.whole_piece, x.rebuilt) == ("unreachable", False, False)
    assert "'a| b'" in x.reason and "'a| |b'" in x.reason
    # spot check the claim: "a b" inside other text never gives the token
    for text in ["a b", "xa b", "a bc", " a b ", "a b\n", "ca b"]:
        assert x.id not in t.encode_ordinary(text)


def test_whole_piece_only_token_never_appears_inside_a_longer_piece():
    t = tok([b"ab", b"xyz"])
    a = audit(t)
    x = by_text(a, b"xyz")
    assert x.status == "whole-piece" and x.whole_piece and not x.rebuilt
    assert t.encode_ordinary("xyz") == [x.id]
    assert x.id not in t.encode_ordinary("xyzzy") and x.id not in t.encode_ordinary("axyz")
    assert a.counts()["whole-piece only"] == 1
    assert by_text(a, b"ab").rebuilt


def test_partial_character_token_found_inside_a_character():
    han = "한".encode()  # ed 95 9c
    t = tok([han[:2]])
    a = audit(t)
    x = by_text(a, han[:2])
    assert x.status == "merges" and not x.whole_piece and x.rebuilt
    assert x.id in t.encode_ordinary(x.witness)


def test_partial_token_beaten_by_an_earlier_merge_needs_another_character():
    # "\x95\x9c" ends 한 (ed 95 9c), where ed+95 merges first; other characters (e1 95 9c) still build it
    han = "한".encode()
    t = tok([han[:2], han[1:]])
    a = audit(t)
    x = by_text(a, han[1:])
    assert x.status == "merges"
    assert x.id in t.encode_ordinary(x.witness) and "한" not in x.witness
    assert x.id not in t.encode_ordinary("한")


def test_partial_token_without_merges_is_unreachable():
    two = "한한".encode()[:4]  # ed 95 9c ed: no two-byte token to build it from
    t = tok([two])
    x = by_text(audit(t), two)
    assert x.status == "unreachable" and "part of a character" in x.reason
    assert x.id not in t.encode_ordinary("한한") and x.id not in t.encode_ordinary("한한한")


def test_impossible_byte_runs():
    assert not in_utf8_text(b"a\x80")  # a continuation byte after ASCII
    assert not in_utf8_text(b"\x80\x80\x80\x80")  # four continuation bytes
    assert not in_utf8_text(b"\xc0")
    assert not in_utf8_text(b"\xed\xa0")  # a surrogate: never in UTF-8 text
    assert in_utf8_text(b"\x95\x9c") and in_utf8_text(b" \xed") and in_utf8_text("한".encode()[1:] + b"a")
    t = tok([b"a\x80"], pattern=None)
    assert by_text(audit(t), b"a\x80").status == "unreachable"


def test_rebuilt_but_never_in_a_piece_is_undecided_not_reachable():
    # " x" is a token, so "a x" merges back to itself, but gpt2's pattern never has it in one piece:
    # the audit cannot prove that and says so instead of claiming a witness
    t = tok([b" x", b"a x"])
    x = by_text(audit(t), b"a x")
    assert (x.status, x.rebuilt, x.witness) == ("undecided", True, None)
    assert "no text tried" in x.reason


def test_merge_without_shortcut_matches_a_plain_python_merge():
    t = get_encoding("cl100k_base")
    ranks = t.mergeable_ranks
    rng = random.Random(5)
    tokens = t.token_bytes_list
    for i in rng.sample(range(len(tokens)), 300):
        b = tokens[i]
        parts = [b[k:k + 1] for k in range(len(b))]
        while len(parts) > 1:
            best = min(((ranks.get(parts[k] + parts[k + 1]), k) for k in range(len(parts) - 1)
                        if parts[k] + parts[k + 1] in ranks), default=None)
            if best is None:
                break
            k = best[1]
            parts[k:k + 2] = [parts[k] + parts[k + 1]]
        assert merge_without_shortcut(t, b) == [ranks[p] for p in parts]


def test_corpus_use():
    t = tok([b"ab", b"cd", b" ab"])
    a = audit(t, "ab ab")
    used = set(t.encode_ordinary("ab ab"))
    assert a.corpus is not None
    assert set(a.corpus.unused) == set(range(t.n_vocab)) - used
    assert a.corpus.tokens == 2 and a.corpus.used == len(used)
    assert a.corpus.unused_reachable == len(a.corpus.unused) - 13  # all but the 13 impossible bytes
    d = a.to_dict()
    assert d["corpus"]["unused"] == len(a.corpus.unused)
    assert d["corpus"]["unused_share"] == pytest.approx(len(a.corpus.unused) / t.n_vocab)


def test_duplicates_known_counts():
    d = duplicates([b"the", b" the", b"The", b" The", b"THE", b"ing", b" x", b"\xe2\x80"])
    assert d.space_pairs == 2  # the/ the, The/ The
    assert d.case_groups == 2  # {the, The, THE}, {" the", " The"}
    assert d.case_tokens == 5
    assert d.groups == 1 and d.grouped_tokens == 5 and d.redundant == 4
    assert sorted(d.largest[0].texts) == sorted(["the", " the", "The", " The", "THE"])


_AUDITS: dict = {}


def bundled_audit(name):
    if name not in _AUDITS:
        _AUDITS[name] = audit(get_encoding(name))
    return _AUDITS[name]


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base", "o200k_base"])
def test_bundled_encodings(name):
    t = get_encoding(name)
    a = bundled_audit(name)
    assert len(a.tokens) == len(t.token_bytes_list)
    impossible = {i for i, b in enumerate(t.token_bytes_list) if not in_utf8_text(b)}
    # the only tokens never produced are the byte values that UTF-8 never uses
    assert {x.id for x in a.unreachable} == impossible
    assert sorted(t.token_bytes_list[i][0] for i in impossible) == [0xC0, 0xC1, *range(0xF5, 0x100)]
    # every claim of reachability comes with a text that really produces the token
    rng = random.Random(1)
    sample = [x for x in a.tokens if x.status == "merges"] + rng.sample(a.tokens, 500)
    for x in sample:
        if x.status in ("whole-piece", "merges"):
            assert x.id in t.encode_ordinary(x.witness)
    assert len(a.undecided) <= 10
    c = a.counts()
    assert sum(c[k] for k in ("whole-piece", "merges", "unreachable", "undecided")) == len(t.token_bytes_list)


def test_audit_with_real_corpus_and_text():
    text = corpus("ko_prose.txt") + corpus("en_austen.txt")
    t = get_encoding("gpt2")
    a = audit(t, text)
    ids = t.encode_ordinary(text)
    assert a.corpus.tokens == len(ids)
    assert len(a.corpus.unused) == t.n_vocab - 1 - len(set(ids))  # minus the special token
    out = a.to_text()
    assert "tokens the corpus never uses" in out and "\\xc0" in out


def test_bad_input():
    with pytest.raises(TypeError, match="byte-level Tokenizer"):
        audit(object())
    with pytest.raises(ValueError, match="unknown encoding"):
        audit("no-such-encoding")


def test_docs_table_is_true():
    """The table of the bundled encodings in docs/inspect.md (all rows but the corpus one)."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "inspect.md").read_text(encoding="utf-8")
    rows = {}
    for line in page.splitlines():
        if line.startswith("| ") and line.count("|") == 5:
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0]] = cells[1:]
    for k, name in enumerate(["gpt2", "cl100k_base", "o200k_base"]):
        a = bundled_audit(name)
        c, d = a.counts(), a.duplicates
        want = {
            "mergeable tokens": f"{a.n_mergeable:,}",
            "produced as a whole piece": f"{c['whole-piece']:,}",
            "produced only inside longer pieces": f"{c['merges']:,}",
            "unreachable": f"{c['unreachable']:,}",
            "undecided": f"{c['undecided']:,}",
            "tokens with a leading-space twin": f"{d.space_pairs:,}",
            "case-variant groups (tokens in them)": f"{d.case_groups:,} ({d.case_tokens:,})",
            "tokens beyond the first of each spelling group": f"{d.redundant:,}",
        }
        for row, value in want.items():
            assert rows[row][k] == value, (name, row)


def test_second_round_finds_tokens_that_need_a_character_on_each_side():
    t = get_encoding("o200k_base")
    x = bundled_audit("o200k_base").token(t.encode_single_token("\n//"))
    # "\n//" is cut as "\n|//" alone; inside "#\n//0"-like text it is one of the final parts
    assert x.status == "merges" and x.witness is not None
    assert x.id in t.encode_ordinary(x.witness)
    start = x.witness.index("\n//")
    assert start > 0 and start + 3 < len(x.witness)
