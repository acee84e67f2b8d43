"""Tokenizer file formats, one module per format.

- :mod:`.native`: bytepair's own versioned JSON file.
"""
