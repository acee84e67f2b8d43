"""Hugging Face tokenizer.json: export checked by the real `tokenizers` library,
import of files built with it in GPT-2 / Llama-3 / Qwen2 style, and refusal of
what bytepair cannot reproduce exactly."""

from __future__ import annotations

import functools
import json

import pytest

import bytepair
from bytepair.errors import FormatError, UnsupportedComponentError
from bytepair.formats import hf_json
from bytepair.formats.hf_tokenizer import PipelineTokenizer
from conftest import corpus, optional, tiktoken_encoding

tokenizers = optional("tokenizers")

SPECIALS = ["<|endoftext|>", "<|pad|>"]
# English, Korean, code and emoji-heavy text (multi_unicode has every emoji with its names)
FIXTURES = ["en_austen.txt", "ko_prose.txt", "code_python.txt", "multi_unicode.txt"]


@functools.cache
def trained(pattern: str | None = "o200k") -> bytepair.Tokenizer:
    """A small tokenizer trained by bytepair on excerpts of the fixtures, with
    specials. Other patterns reuse the o200k-trained vocabulary (any vocabulary
    works with any pattern), which keeps the test fast."""
    if pattern != "o200k":
        base = trained()
        return bytepair.Tokenizer(base.token_bytes_list, pattern, base.special_tokens, merges=base.merges)
    texts = [corpus(name)[:6000] for name in FIXTURES]
    return bytepair.train(texts, 600, pattern=pattern, special_tokens=SPECIALS)


def with_specials(text: str) -> str:
    """The fixture text with the special tokens in it, so they are checked too."""
    mid = len(text) // 2
    return SPECIALS[0] + text[:mid] + SPECIALS[1] + text[mid:] + SPECIALS[0]


def hf_ids(hf, text: str) -> list:
    return hf.encode(text, add_special_tokens=False).ids


# ---------------------------------------------------------------- export, checked by tokenizers


@pytest.mark.parametrize("pattern", ["o200k", "gpt2", "cl100k", None])
def test_trained_tokenizer_matches_tokenizers_library(tmp_path, pattern):
    tok = trained(pattern)
    path = tmp_path / "tokenizer.json"
    hf_json.save(tok, path)
    hf = tokenizers.Tokenizer.from_file(str(path))
    assert max(hf.get_vocab().values()) + 1 == tok.n_vocab
    for name in FIXTURES:
        # without a pattern each document is one piece; keep it short (long
        # single pieces are slow to encode in the current core)
        text = with_specials(corpus(name) if pattern else corpus(name)[:4000])
        ids = tok.encode(text, allowed_special="all")
        assert hf_ids(hf, text) == ids, (name, pattern)
        assert hf.decode(ids, skip_special_tokens=False) == text
    # and bytepair reads its own export back unchanged
    assert bytepair.load(path) == tok


@pytest.mark.parametrize("merge_style", ["string", "pair"])
@pytest.mark.parametrize("merges", ["all", "minimal"])
def test_merge_encodings_and_modes(tmp_path, merges, merge_style):
    tok = trained()
    path = tmp_path / "tokenizer.json"
    hf_json.save(tok, path, merges=merges, merge_style=merge_style)
    d = json.loads(path.read_text(encoding="utf-8"))
    first = d["model"]["merges"][0]
    assert isinstance(first, str if merge_style == "string" else list)
    if merges == "minimal":
        assert len(d["model"]["merges"]) == len(tok.merges)
    hf = tokenizers.Tokenizer.from_file(str(path))
    text = with_specials(corpus("ko_prose.txt"))
    assert hf_ids(hf, text) == tok.encode(text, allowed_special="all")
    assert hf_json.load(path) == tok


@functools.cache
def exported_bundled(name: str, folder: str) -> str:
    path = f"{folder}/{name}.tokenizer.json"
    hf_json.save(bytepair.get_encoding(name), path)
    return path


@pytest.fixture(scope="session")
def export_dir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("hf-export"))


@pytest.mark.parametrize(
    "name", ["gpt2", "cl100k_base", pytest.param("o200k_base", marks=pytest.mark.slow)]
)
def test_bundled_encodings_load_in_tokenizers_and_match_tiktoken(export_dir, name):
    path = exported_bundled(name, export_dir)
    hf = tokenizers.Tokenizer.from_file(path)
    tt = tiktoken_encoding(name)
    assert max(hf.get_vocab().values()) + 1 == tt.n_vocab
    for fixture in FIXTURES:
        text = corpus(fixture) + "<|endoftext|>"
        assert hf_ids(hf, text) == tt.encode(text, allowed_special="all"), fixture


@pytest.mark.parametrize("name", ["gpt2", "cl100k_base"])
def test_bundled_export_reads_back_identically(export_dir, name):
    assert hf_json.load(exported_bundled(name, export_dir)) == bytepair.get_encoding(name)


def test_written_layout(tmp_path):
    """The parts tokenizers needs for exactness (see DATA.md)."""
    d = hf_json.to_dict(trained())
    assert d["model"]["type"] == "BPE" and d["model"]["ignore_merges"] is True
    assert d["decoder"]["type"] == "ByteLevel"
    pre = d["pre_tokenizer"]["pretokenizers"]
    assert pre[0]["type"] == "Split" and pre[0]["behavior"] == "Isolated"
    assert pre[1] == {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    for s, i in trained().special_tokens.items():  # specials are in the model vocab too
        assert d["model"]["vocab"][s] == i
        assert {"id": i, "content": s, "special": True}.items() <= next(
            a for a in d["added_tokens"] if a["id"] == i).items()
    cl = hf_json.to_dict(bytepair.get_encoding("cl100k_base"), merges="minimal")
    assert r"\p{N}{1,3}+" not in cl["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]


# ---------------------------------------------------------------- import of real-style files


def _bpe_model(tok: bytepair.Tokenizer, merges: str = "all"):
    d = hf_json.to_dict(tok, merges=merges)
    vocab = {s: i for s, i in d["model"]["vocab"].items() if i < len(tok.token_bytes_list)}
    pairs = [tuple(m.split(" ")) for m in d["model"]["merges"]]
    return vocab, pairs


def _gpt2_style(tok: bytepair.Tokenizer):
    """How GPT-2's tokenizer.json is built: BPE + ByteLevel everything."""
    from tokenizers import decoders, models, pre_tokenizers, processors

    vocab, merges = _bpe_model(tok, "minimal")
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    hf.post_processor = processors.ByteLevel(trim_offsets=False)
    hf.add_special_tokens([tokenizers.AddedToken(s, special=True) for s in
                           sorted(tok.special_tokens, key=tok.special_tokens.get)])
    return hf


def _llama3_style(tok: bytepair.Tokenizer, pattern: str):
    """How Llama-3's tokenizer.json is built: Split(regex) + ByteLevel(use_regex=False),
    ignore_merges, a BOS-adding TemplateProcessing, many reserved specials."""
    from tokenizers import Regex, decoders, models, pre_tokenizers, processors

    vocab, merges = _bpe_model(tok, "all")
    hf = tokenizers.Tokenizer(models.BPE(vocab, merges, ignore_merges=True))
    hf.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    hf.decoder = decoders.ByteLevel()
    bos = "<|begin_of_text|>"
    hf.add_special_tokens([tokenizers.AddedToken(s, special=True) for s in
                           sorted(tok.special_tokens, key=tok.special_tokens.get)] + [bos])
    hf.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single=f"{bos} $A", pair=f"{bos} $A {bos} $B",
                                      special_tokens=[(bos, hf.token_to_id(bos))]),
    ])
    return hf


LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                  r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                 r"|\s*[\r\n]+|\s+(?!\S)|\s+")


def _check_same_ids(tok: bytepair.Tokenizer, hf, fixtures=FIXTURES):
    for name in fixtures:
        text = with_specials(corpus(name))
        assert tok.encode(text, allowed_special="all") == hf_ids(hf, text), name


def test_import_gpt2_style_file(tmp_path):
    src = trained("gpt2")
    hf = _gpt2_style(src)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = bytepair.load(path)
    assert tok.pattern == bytepair.patterns.GPT2
    assert tok == src
    _check_same_ids(tok, hf)


@pytest.mark.parametrize("pattern", [LLAMA3_PATTERN, QWEN2_PATTERN])
def test_import_llama3_and_qwen2_style_files(tmp_path, pattern):
    src = trained()
    hf = _llama3_style(src, pattern)
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = bytepair.load(path)
    assert tok.pattern == pattern
    assert tok.token_bytes_list == src.token_bytes_list
    assert tok.special_tokens["<|begin_of_text|>"] == hf.token_to_id("<|begin_of_text|>")
    _check_same_ids(tok, hf)


def _pipeline_ids(tok, hf, texts) -> None:
    """The file gives tokenizers' ids and decoding."""
    for text in texts:
        want = hf.encode(text, add_special_tokens=False).ids
        # a rank-based reading (files whose merges mean rank order) takes tiktoken's arguments
        kwargs = {} if isinstance(tok, PipelineTokenizer) else {"allowed_special": "all"}
        assert tok.encode(text, **kwargs) == want, text[:60]
        assert tok.decode(want) == hf.decode(want, skip_special_tokens=False)


def test_import_qwen2_normalizer_runs_its_pipeline(tmp_path):
    from tokenizers import normalizers

    hf = _llama3_style(trained(), QWEN2_PATTERN)
    hf.normalizer = normalizers.NFC()
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = bytepair.load(path)
    assert isinstance(tok, PipelineTokenizer)
    _pipeline_ids(tok, hf, [corpus(n) for n in FIXTURES] + ["e\u0301te\u0301 A\u030a"])
    # the rank-based reading stays available as an explicit opt-out
    tok = bytepair.load(path, ignore_normalizer=True)
    _check_same_ids(tok, hf, ["ko_prose.txt", "code_python.txt"])  # already NFC text


def test_import_cl100k_hf_pattern_maps_back_to_builtin(export_dir):
    tok = hf_json.load(exported_bundled("cl100k_base", export_dir))
    assert tok.pattern == bytepair.patterns.CL100K and tok.pattern_name == "cl100k"


# ---------------------------------------------------------------- refusals


def _small_file(tmp_path, edit) -> str:
    d = hf_json.to_dict(trained(), merges="minimal")
    edit(d)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "edit, where, what",
    [
        (lambda d: d["model"].update(type="WordPiece"), "$.model.type", "WordPiece"),
        (lambda d: d["model"].update(type="Unigram"), "$.model.type", "Unigram"),
        (lambda d: d["model"].update(byte_fallback=True), "$.model.byte_fallback", "byte_fallback"),
        (lambda d: d["model"].update(dropout=0.1), "$.model.dropout", "dropout"),
        (lambda d: d["model"].update(continuing_subword_prefix="##"), "$.model.continuing_subword_prefix",
         "continuing_subword_prefix"),
        (lambda d: d.update(normalizer={"type": "BertNormalizer"}), "$.normalizer.type", "BertNormalizer"),
        (lambda d: d["pre_tokenizer"]["pretokenizers"].reverse(),
         "$.pre_tokenizer.pretokenizers[1].type", "after ByteLevel"),
        (lambda d: d.update(pre_tokenizer={"type": "Whitespace"}), "$.pre_tokenizer.type", "Whitespace"),
        (lambda d: d.update(pre_tokenizer={"type": "Metaspace", "replacement": "▁"}), "$.pre_tokenizer.type",
         "Metaspace"),
        (lambda d: d.update(decoder={"type": "ByteFallback"}), "$.decoder.type", "ByteFallback"),
        (lambda d: d.update(truncation={"max_length": 8}), "$.truncation", "truncation"),
    ],
)
def test_unsupported_components_are_named(tmp_path, edit, where, what):
    path = _small_file(tmp_path, edit)
    with pytest.raises(UnsupportedComponentError) as e:
        bytepair.load(path)
    msg = str(e.value)
    assert path in msg and where in msg and what in msg, msg
    assert isinstance(e.value, ValueError)


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d.update(normalizer={"type": "Lowercase"}),
        lambda d: d.update(normalizer={"type": "Sequence", "normalizers": [
            {"type": "NFKC"}, {"type": "Strip", "strip_left": True, "strip_right": False},
            {"type": "Replace", "pattern": {"String": "  "}, "content": " "},
            {"type": "Prepend", "prepend": "^"}]}),
        lambda d: d["pre_tokenizer"]["pretokenizers"][1].update(add_prefix_space=True),
        lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed"),
        lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed", invert=True),
        lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(behavior="MergedWithNext"),
        lambda d: d["pre_tokenizer"]["pretokenizers"].insert(0, {"type": "Digits", "individual_digits": True}),
        lambda d: d["added_tokens"][0].update(lstrip=True, rstrip=True),
        lambda d: d["added_tokens"].append({"id": 9999, "content": "the", "single_word": True, "lstrip": False,
                                            "rstrip": False, "normalized": True, "special": False}),
        lambda d: d["model"].update(ignore_merges=False),
        lambda d: d["model"]["merges"].reverse(),
        lambda d: d["model"]["merges"].pop(),
        lambda d: d["model"]["vocab"].pop("ÿ"),  # a byte no merge uses: tokenizers drops it
        lambda d: d["added_tokens"][0].update(id=3),
    ],
)
def test_components_run_as_tokenizers_runs_them(tmp_path, edit):
    path = _small_file(tmp_path, edit)
    hf = tokenizers.Tokenizer.from_file(path)
    texts = [corpus(n)[:3000] for n in FIXTURES]
    texts += ["<|endoftext|>the  then <|endoftext|> the\n 12345 ①", "  x  ", "", "ABC  Ünïcödé"]
    _pipeline_ids(bytepair.load(path), hf, texts)


def test_real_wordpiece_file_is_refused(tmp_path):
    from tokenizers import models

    hf = tokenizers.Tokenizer(models.WordPiece({"[UNK]": 0, "a": 1, "##b": 2}, unk_token="[UNK]"))
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    with pytest.raises(UnsupportedComponentError, match=r"WordPiece.*\(\$\.model\.type\)|\$\.model\.type.*WordPiece"):
        bytepair.load(path)


@pytest.mark.parametrize(
    "edit, where, what",
    [
        (lambda d: d["model"]["merges"].__setitem__(3, "Ġ zzz"), "$.model.merges[3]", "not in the vocab"),
        (lambda d: d["model"]["merges"].__setitem__(3, "a"), "$.model.merges[3]", "left right"),
        (lambda d: d["model"]["vocab"].update({"Ġ": "x"}), "$.model.vocab", "has id 'x'"),
    ],
)
def test_inconsistent_files_name_the_place(tmp_path, edit, where, what):
    path = _small_file(tmp_path, edit)
    with pytest.raises(FormatError) as e:
        bytepair.load(path)
    msg = str(e.value)
    assert path in msg and where in msg and what in msg, msg


def test_invalid_and_truncated_json(tmp_path):
    good = hf_json.dumps(trained(), merges="minimal")
    path = tmp_path / "tokenizer.json"
    path.write_text(good[: len(good) // 2], encoding="utf-8")
    with pytest.raises(FormatError, match=r"not valid JSON.*truncated") as e:
        bytepair.load(path)
    assert "at line 1, column " in str(e.value) and str(path) in str(e.value)
    path.write_text(good.replace('"merges": [', '"merges": [,', 1), encoding="utf-8")
    with pytest.raises(FormatError, match="not valid JSON"):
        bytepair.load(path)


def test_duplicate_vocab_key_is_refused(tmp_path):
    text = hf_json.dumps(trained(), merges="minimal").replace('"vocab": {', '"vocab": {"a": 97, ', 1)
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FormatError, match="'a' appears twice"):
        bytepair.load(path)


def test_export_refuses_pattern_oniguruma_reads_differently():
    tok = bytepair.Tokenizer([bytes([b]) for b in range(256)], r"\d{1,2}+|\D+")
    with pytest.raises(UnsupportedComponentError, match="possessive"):
        hf_json.to_dict(tok)


def test_token_reached_through_an_unlisted_split_runs_the_merge_list(tmp_path):
    """'abc' listed as a+bc, but rank order first makes 'ab' (id 256) from 'a b c',
    so HF (merge list) and bytepair's ranks would split 'abc' differently: the
    file is read with its own pipeline, which follows the merge list."""
    tok = bytepair.Tokenizer([bytes([b]) for b in range(256)] + [b"ab", b"bc", b"abc"], None)
    d = hf_json.to_dict(tok, merges="minimal")
    assert d["model"]["merges"][2] == "ab c"
    d["model"]["merges"][2] = "a bc"
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    _pipeline_ids(bytepair.load(path), tokenizers.Tokenizer.from_file(str(path)), ["abc", "xabcabc ab c"])
    # with both splits listed (what writers do by default) the file is exact
    d["model"]["merges"].append("ab c")
    path.write_text(json.dumps(d), encoding="utf-8")
    assert bytepair.load(path) == tok
