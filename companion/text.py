"""Rules for text people type, and safe ways to write stored text back out.

Two halves, because a log may hold text from before the rules existed:

* Input: :func:`text_problem` says what is wrong with a string a command
  carries (a lone surrogate, a control character, a bidi control), and
  :func:`clean_name` applies the stricter rules of a player's name.
* Output: :func:`dumps_json` and :func:`printable` turn any stored text,
  however it got there, into something UTF-8 can carry, so the live stream
  and every export work on any log (see docs/api.md, "Names and text").

Pure functions: no I/O.
"""

from __future__ import annotations

import codecs
import json
import re
import unicodedata
from typing import Any

#: Explicit bidi formatting: embeddings, overrides, isolates and their ends, and the bare marks.
#: They can make a name read backwards or swallow the text after it on other phones.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
#: Letters and symbols that draw nothing (Hangul fillers, the braille blank): they do not make a name visible.
BLANK_LOOKALIKES = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_SURROGATE = re.compile("[\ud800-\udfff]")
#: Characters XML 1.0 (SVG) cannot hold at all, plus lone surrogates.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why ``value`` may not be stored, or None: lone surrogates, control and bidi characters are refused."""
    for ch in value:
        code = ord(ch)
        if 0xD800 <= code <= 0xDFFF:
            return f"a lone surrogate (U+{code:04X}), which is not a character"
        category = unicodedata.category(ch)
        if category == "Cc":
            return f"a control character (U+{code:04X})"
        if ch in BIDI_CONTROLS:
            return f"a bidi control character (U+{code:04X}), which reorders the text around it"
        if ch in ("\u2028", "\u2029"):
            return f"a line or paragraph separator (U+{code:04X})"
    return None


def check_text_tree(value: Any, where: str) -> None:
    """ValueError naming the first string (key or value, at any depth) in ``value`` that :func:`text_problem` refuses."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem is not None:
                raise ValueError(f"{path} contains {problem}; send plain text")
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str):
                    problem = text_problem(key)
                    if problem is not None:
                        raise ValueError(f"a field name in {path} contains {problem}; send plain text")
                stack.append((sub, f"'{key}'" if path == where else f"{path}.{key}"))
        elif isinstance(item, (list, tuple)):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(item))


def is_visible(ch: str) -> bool:
    """True for a character that draws something: a letter, digit, punctuation or symbol that is not a blank look-alike."""
    return unicodedata.category(ch)[0] in "LNPS" and ch not in BLANK_LOOKALIKES


def clean_name(raw: str, limit: int) -> str:
    """``raw`` as a player's name: runs of whitespace made one space, ends trimmed; ValueError saying what is wrong.

    Refused: anything :func:`text_problem` refuses, a name with no visible
    character (only zero-width or blank characters), more than ``limit`` characters.
    """
    problem = text_problem(raw)
    if problem is not None:
        raise ValueError(f"'name' contains {problem}; use letters, digits, spaces and symbols")
    name = " ".join(raw.split())
    if not 1 <= len(name) <= limit:
        raise ValueError(f"'name' must be 1 to {limit} characters, got {raw!r}")
    if not any(is_visible(ch) for ch in name):
        raise ValueError(f"'name' must contain a visible character (a letter, digit or symbol), got {raw!r}")
    return name


# ----------------------------------------------------------------------------- output
def _escape_surrogates(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def dumps_json(data: Any, **kwargs: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, **kwargs)`` whose text UTF-8 can always encode.

    A lone surrogate cannot be written as UTF-8; JSON can still carry it as a
    ``\\udxxx`` escape, so the data reads back exactly as stored. With
    ``ensure_ascii=False`` a surrogate can only stand inside a string literal,
    where the escape is valid.
    """
    return _SURROGATE.sub(_escape_surrogates, json.dumps(data, ensure_ascii=False, **kwargs))


def printable(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, for CSV cells and other plain text."""
    return _SURROGATE.sub("\ufffd", text)


def xml_text(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold (C0 controls, lone surrogates) replaced by U+FFFD; escape it afterwards."""
    return _NOT_XML.sub("\ufffd", text)


def _replace_unencodable(error: UnicodeError) -> tuple[bytes, int]:
    if not isinstance(error, UnicodeEncodeError):  # pragma: no cover - registered for encoding only
        raise error
    # Bytes, not "\ufffd": the UTF-8 encoder takes only ASCII text back from a handler.
    return "\ufffd".encode("utf-8") * (error.end - error.start), error.end


#: ``str.encode("utf-8", ERRORS)``: never fails; a lone surrogate becomes U+FFFD (not "?" as "replace" would).
ERRORS = "tabletop-replace"
codecs.register_error(ERRORS, _replace_unencodable)


def encode_utf8(text: str) -> bytes:
    """``text`` as UTF-8 that never raises: a lone surrogate becomes U+FFFD."""
    return text.encode("utf-8", ERRORS)


def spreadsheet_cell(text: str) -> str:
    """Text for a CSV cell a spreadsheet opens: a leading = + - @ would start a formula (a ``'`` goes first),
    a lone surrogate becomes U+FFFD."""
    text = printable(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
