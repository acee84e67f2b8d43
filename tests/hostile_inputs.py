"""The hostile inputs: text built to hurt a BPE encoder, shared by
tests/reliability/test_hostile_input_linear_time.py and
scripts/reliability-measure.py.

Each entry is a Python expression that builds about ``n`` bytes of text from
``n``, ``random`` and ``base64`` (an expression, not a function, because it is
evaluated in a fresh child process); seeded, so every run sees the same input.
``' ' * (n - 1) + 'x'`` is the input that crashes tiktoken.
"""

CASES = {
    "x": "'x' * n",
    "spaces": "' ' * n",
    "spaces_then_x": "' ' * (n - 1) + 'x'",
    "base64": "base64.b64encode(random.Random(1).randbytes(n * 3 // 4)).decode()",
    "korean_word": "(lambda r: ''.join(chr(0xAC00 + r.randrange(11172)) for _ in range(n // 3)))(random.Random(2))",
    "emoji_word": "'\\U0001F600\\u200d\\U0001F3FB' * (n // 11)",
    "repetitive": "'ab' * (n // 2)",
    "punctuation": "'!?' * (n // 2)",
}
