"""The app's Response class: a body is always valid UTF-8, whatever text the log holds.

A name stored before the text rules (docs/api.md, "Names and text") may hold
a lone surrogate, which strict UTF-8 refuses: every page, export and chart
that shows it would answer 500. Here such a character becomes U+FFFD instead.
Routes that can keep the text exact (JSON exports) escape it themselves first.
"""

from __future__ import annotations

from flask import Response

from companion.text import encode_utf8


class SafeResponse(Response):
    """Flask's Response whose text bodies are encoded with :func:`companion.text.encode_utf8`."""

    def set_data(self, value: bytes | str) -> None:
        """Set the body; text is encoded as UTF-8 that never raises."""
        super().set_data(encode_utf8(value) if isinstance(value, str) else value)
