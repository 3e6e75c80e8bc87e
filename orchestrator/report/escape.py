"""Text that reaches Markdown or HTML, made inert: a name is shown, never obeyed.

A kernel name, a label, a failure's reason or a host fact comes from programs and files we did
not write. In report.md `<script>` or `<cutlass_80_...>` would be raw HTML (GitHub hides an
unknown tag and its text; a viewer that renders HTML runs a script), and U+202E (RIGHT-TO-LEFT
OVERRIDE) or another bidirectional control would reorder what a reader sees. So every bidi
control and every C0/C1 control but tab is shown as its code point (`[U+202E]`), and in
Markdown `<`, `>` and `&` become entities outside code spans (inside a matched code span they
are already literal text). The HTML exporter escapes with html.escape after `neutral`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# LRE, RLE, PDF, LRO, RLO; LRI, RLI, FSI, PDI; LRM, RLM, ALM: every Unicode bidi control
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)")
_MARKDOWN_HTML = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def neutral(text: str) -> str:
    """Bidi and other control characters shown as their code points, never applied."""
    return _CONTROL.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


def markdown(text: str) -> str:
    """A line of Markdown with no raw HTML: `<`, `>`, `&` as entities outside code spans."""
    return _outside_code(neutral(text), _entities)


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [change(text[at:span.start()]), span.group()]
        at = span.end()
    return "".join([*out, change(text[at:])])


def _entities(text: str) -> str:
    # an entity already there (`&lt;` from a cell escaped before) stays: escaping twice is once
    return re.sub(r"[<>]|&(?!(?:lt|gt|amp|quot|#\d+);)", lambda m: _MARKDOWN_HTML[m.group()],
                  text)


def _lone_stars(text: str) -> str:
    """A lone `*` escaped; a pair is the report's own bold (compare's `**slower**`)."""
    return re.sub(r"(?<![*\\])\*(?!\*)", r"\\*", text)


def markdown_cell(text: str) -> str:
    """A table cell: one line, `|` escaped, a lone `*` not read as emphasis (`float const*, float
    const*` was italic), then `markdown`."""
    text = text.replace("|", "\\|").replace("\n", " ").replace("\r", " ")
    return markdown(_outside_code(text, _lone_stars))
