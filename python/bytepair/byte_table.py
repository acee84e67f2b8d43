"""GPT-2's table from bytes to printable characters, which the byte-level file
formats (bytepair JSON, GPT-2 ``vocab.json``/``merges.txt``, Hugging Face
``tokenizer.json``) use to write token bytes as readable strings: ``Ġthe`` is
`` the``."""

from __future__ import annotations

from typing import Dict


def bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's table from each byte to a printable character.

    Printable bytes (``!``..``~``, ``¡``..``¬``, ``®``..``ÿ``) stand for themselves;
    the other 68 bytes get U+0100, U+0101, ... in byte order.

    >>> t = bytes_to_unicode()
    >>> t[ord("A")], t[0x20], t[0x0A], t[0x00]
    ('A', 'Ġ', 'Ċ', 'Ā')
    """
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(0x100 + extra)
            extra += 1
    return dict(sorted(table.items()))


__all__ = ["bytes_to_unicode"]
