"""JSON Lines: when a line is blank.

A leaf module (imports nothing from ``analysis_lib``). Every JSON-lines reader of the library (the Search Arena
release, the attribution subset, Text Arena, nugget records, support results) skips blank lines and refuses any
other line that is not one JSON value. Blank means JSON's own whitespace only (RFC 8259: space, tab, CR, LF):
Python's ``str.strip`` also strips control characters such as ``\\x1c`` ("file separator"), which JSON does not
accept, so such a line is bad JSON, named by file and line, never skipped.
"""

from __future__ import annotations

#: The whitespace JSON allows between values (RFC 8259).
JSON_WHITESPACE = " \t\r\n"
_JSON_WHITESPACE_BYTES = JSON_WHITESPACE.encode()


def blank(line: str | bytes) -> bool:
    """Whether a line (text or bytes) holds nothing but :data:`JSON_WHITESPACE`."""
    if isinstance(line, bytes):
        return not line.strip(_JSON_WHITESPACE_BYTES)
    return not line.strip(JSON_WHITESPACE)
