"""Every integer option of the command line, given a huge and a negative value,
as a user types it (the installed ``bytepair`` executable in a subprocess):
either a one-line error naming the option with exit status 2, or, where a huge
value cannot bind (a limit, a budget, a thread count), the normal result.
Never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import bytepair_cli

HUGE = str(2**70)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("bounds")
    (d / "t.txt").write_text("hello world this is a test of the tokenizer\nanother line here\n" * 20)
    r = bytepair_cli("train", "t.txt", "--vocab-size", "270", "-q", "-o", "tok.json", cwd=d)
    assert r.returncode == 0, r.stderr
    return d


# (argv with {V} for the value, whether a huge value is refused (else it cannot bind and the command works))
CASES = [
    ("train t.txt --vocab-size {V} -q -o o.json", True),
    ("train t.txt --min-frequency {V} -q -o o.json", False),
    ("train t.txt --max-token-length {V} -q -o o.json", False),
    ("train t.txt --threads {V} -q -o o.json", False),
    ("train --parity en=t.txt ko=t.txt --vocab-size {V} -q -o o.json", True),
    ("train --parity en=t.txt ko=t.txt --parity-global {V} -q -o o.json", False),
    ("extend -t tok.json t.txt --add {V} -o o.json", True),
    ("extend -t tok.json t.txt --vocab-size {V} -o o.json", True),
    ("extend -t tok.json t.txt --add 3 --min-frequency {V} -o o.json", False),
    ("extend -t tok.json t.txt --add 3 --max-token-length {V} -o o.json", False),
    ("extend -t tok.json t.txt --add 3 --threads {V} -o o.json", False),
    ("count --limit {V} t.txt", False),
    ("truncate --max-tokens {V} t.txt", False),
    ("chunk --max-tokens {V} t.txt", False),
    ("chunk --max-tokens 10 --overlap {V} t.txt", True),
    ("pieces --limit {V} t.txt", False),
    ("trace --merges {V} --text abcabc", True),
    ("sweep -t tok.json --sizes {V} t.txt", True),  # a size above n_vocab is refused
    ("sweep -t tok.json --merges {V} t.txt", True),
    ("diff gpt2 tok.json --text t.txt --limit {V}", False),
    ("audit -t tok.json --limit {V}", False),
    ("convert tok.json hf --to transformers --model-max-length {V}", False),
    ("decode -t tok.json {V}", True),
    ("count-chunks t.txt -o c.bpc --workers {V}", False),
    ("count-chunks t.txt -o c.bpc --max-retries {V}", True),
    ("encode-dataset t.txt -e gpt2 -o ds --workers {V}", False),
    ("encode-dataset t.txt -e gpt2 -o ds --max-retries {V}", True),
    ("serve -e gpt2 --port {V}", True),
]


@pytest.mark.parametrize(("argv", "refused"), CASES, ids=[c[0].split(" {V}")[0] for c in CASES])
@pytest.mark.parametrize("value", [HUGE, "-5"])
def test_integer_option_bounds(work, tmp_path, argv, refused, value):
    # each run writes into its own folder (count-chunks and encode-dataset resume)
    for name in ("t.txt", "tok.json"):
        (tmp_path / name).write_bytes((work / name).read_bytes())
    r = bytepair_cli(*argv.format(V=value).split(), cwd=tmp_path)
    assert "Traceback" not in r.stderr and "Error:" not in r.stderr, r.stderr[-2000:]
    if value == HUGE and not refused:
        assert r.returncode == 0, r.stderr
    else:
        assert r.returncode == 2, (r.returncode, r.stdout[-500:], r.stderr[-500:])
        # one error line (argparse's own refusals print the usage above it)
        errors = [line for line in r.stderr.strip().splitlines() if "error:" in line]
        assert len(errors) == 1 and r.stderr.strip().endswith(errors[0]), r.stderr
