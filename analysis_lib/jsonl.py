"""JSON Lines: when a line is blank, and how long a line may be.

A leaf module (imports nothing from ``analysis_lib``). Every JSON-lines reader of the library (the Search Arena
release, the attribution subset, Text Arena, DR-Arena match logs, nugget records, support results) skips blank
lines, refuses any other line that is not one JSON value, and refuses a line longer than :data:`MAX_LINE_BYTES`
(one bound shared by every reader, so a file one reader accepts is not refused by another for its line lengths).
Blank means JSON's own whitespace only (RFC 8259: space, tab, CR, LF):
Python's ``str.strip`` also strips control characters such as ``\\x1c`` ("file separator"), which JSON does not
accept, so such a line is bad JSON, named by file and line, never skipped.
"""

from __future__ import annotations

#: Longest JSON line any reader accepts, in bytes (a real Search Arena conversation is a few hundred kB at most; a
#: nugget record of a long answer a few MB).
MAX_LINE_BYTES = 64 * 1024**2

#: The whitespace JSON allows between values (RFC 8259).
JSON_WHITESPACE = " \t\r\n"
_JSON_WHITESPACE_BYTES = JSON_WHITESPACE.encode()


def blank(line: str | bytes) -> bool:
    """Whether a line (text or bytes) holds nothing but :data:`JSON_WHITESPACE`."""
    if isinstance(line, bytes):
        return not line.strip(_JSON_WHITESPACE_BYTES)
    return not line.strip(JSON_WHITESPACE)
