"""Rendering of tool results: plain-text and rich tables (:mod:`.text`), HTML token
pages (:mod:`.html`) and matplotlib figures (:mod:`.plot`, optional extra).

A tool layer: it imports the library, never the reverse.
"""

from .text import (
           PerToken,
           Plain,
           TableResult,
           bytes_json,
           display_width,
           format_table,
           is_complete_utf8,
           per,
           plain,
           show_bytes,
           show_token,
           visible,
)

__all__ = ["PerToken", "Plain", "TableResult", "bytes_json", "display_width", "format_table", "is_complete_utf8", "per",
           "plain", "show_bytes", "show_token", "visible"]
