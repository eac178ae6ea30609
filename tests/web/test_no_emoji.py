"""No emoji in the pages, scripts and stylesheets: pictures are inline SVG.

A Raspberry Pi kiosk has no colour emoji font, so an emoji on the table screen
or a phone page is an empty box there. Every file under ``web/static`` and
``web/templates`` is read as text and searched for emoji written out or as an
escape (JavaScript ``\\u{1F32E}`` / ``\\uD83C``, CSS ``\\1F32E``, HTML
``&#x1F32E;``). An emoji here is a character outside the Basic Multilingual
Plane (where every pictograph of the emoji set lives but a few), one of the BMP
characters Unicode draws as emoji by default (Emoji_Presentation=Yes in
emoji-data.txt: the hand, the check box, the star...), or the emoji variation
selector U+FE0F. Text symbols the kiosk's DejaVu fonts draw (arrows, the tick,
geometric shapes) stay allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

WEB = Path(__file__).resolve().parents[2] / "web"
FOLDERS = (WEB / "static", WEB / "templates")

# Emoji_Presentation=Yes code points of the BMP (Unicode 15.1 emoji-data.txt).
BMP_EMOJI = (
    (0x231A, 0x231B), (0x23E9, 0x23EC), (0x23F0, 0x23F0), (0x23F3, 0x23F3), (0x25FD, 0x25FE),
    (0x2614, 0x2615), (0x2648, 0x2653), (0x267F, 0x267F), (0x2693, 0x2693), (0x26A1, 0x26A1),
    (0x26AA, 0x26AB), (0x26BD, 0x26BE), (0x26C4, 0x26C5), (0x26CE, 0x26CE), (0x26D4, 0x26D4),
    (0x26EA, 0x26EA), (0x26F2, 0x26F3), (0x26F5, 0x26F5), (0x26FA, 0x26FA), (0x26FD, 0x26FD),
    (0x2705, 0x2705), (0x270A, 0x270B), (0x2728, 0x2728), (0x274C, 0x274C), (0x274E, 0x274E),
    (0x2753, 0x2755), (0x2757, 0x2757), (0x2795, 0x2797), (0x27B0, 0x27B0), (0x27BF, 0x27BF),
    (0x2B1B, 0x2B1C), (0x2B50, 0x2B50), (0x2B55, 0x2B55),
)
VARIATION_SELECTOR_EMOJI = 0xFE0F

# Escapes that write a code point in a script, a stylesheet or a page.
ESCAPES = (
    re.compile(r"\\u\{([0-9A-Fa-f]{1,6})\}"),  # JavaScript \u{1F32E}
    re.compile(r"\\u([0-9A-Fa-f]{4})"),  # JavaScript \uD83C, \u270B
    re.compile(r"&#[xX]([0-9A-Fa-f]{1,6});"),  # HTML &#x1F32E;
    re.compile(r"\\([0-9A-Fa-f]{5,6})(?![0-9A-Fa-f])"),  # CSS \1F32E (five or six digits: past the BMP)
)
DECIMAL_ENTITY = re.compile(r"&#(\d{1,7});")


def is_emoji(code: int) -> bool:
    """True for a code point a browser draws as an emoji (or half of one, a surrogate)."""
    if code > 0xFFFF or 0xD800 <= code <= 0xDFFF or code == VARIATION_SELECTOR_EMOJI:
        return True
    return any(low <= code <= high for low, high in BMP_EMOJI)


def emoji_in(text: str) -> list[str]:
    """Each emoji in ``text``, written out or escaped, as 'line N: U+XXXX'."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        codes = [ord(ch) for ch in line]
        for pattern in ESCAPES:
            codes += [int(m.group(1), 16) for m in pattern.finditer(line)]
        codes += [int(m.group(1)) for m in DECIMAL_ENTITY.finditer(line)]
        found += [f"line {number}: U+{code:04X}" for code in codes if is_emoji(code)]
    return found


def web_files() -> list[Path]:
    """Every file of the pages, scripts and stylesheets."""
    return sorted(p for folder in FOLDERS for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "sample",
    [
        "x.textContent = '\U0001F32E';",  # taco, written out
        ".slapped::before { content: '\u270B '; }",  # raised hand, BMP emoji
        "fillText('\\uD83C\\uDF2E')",  # surrogate escape
        "h('span', {}, '\\u{1F3A9}')",  # ES6 escape
        "content: '\\1F44B';",  # CSS escape
        "<span>&#x1F382;</span>",  # hex entity
        "<span>&#127874;</span>",  # decimal entity
        "\u2764\ufe0f",  # heart with the emoji selector
    ],
)
def test_an_emoji_in_any_spelling_is_found(sample: str) -> None:
    assert emoji_in(sample), sample


@pytest.mark.parametrize("sample", ["a \u2192 b", "no slap \u2713", "\u25cf \u25b2 \u25c6 \u2605", "#1 \u21c4 #2", "\u2715", "color: #1F3A9C;"])
def test_text_symbols_the_kiosk_fonts_draw_are_allowed(sample: str) -> None:
    assert emoji_in(sample) == []


def test_no_emoji_in_the_pages_scripts_and_stylesheets() -> None:
    files = web_files()
    assert len(files) > 20, "the web folders were not found"
    offending = {str(p.relative_to(WEB)): found for p in files if (found := emoji_in(p.read_text(encoding="utf-8")))}
    assert offending == {}, "draw these as inline SVG (web/static/icons.js), not emoji"
