"""Text from files and emails, made safe to show a person (issue 27 point 7).

Every string that comes from a turn file, an event, an email or any other
input may hold terminal escape sequences (ESC, BEL, C1 controls), line
breaks that forge extra output lines, or bidirectional overrides that make
text read differently from what it is. ``shown`` escapes all of them and
cuts the text to a bounded length, so one line of output stays one line of
honest text whatever the input (PLAN: at most 300 characters of input text
in an error line).
"""

from __future__ import annotations

import unicodedata

#: PLAN: error lines from input show at most this many characters of input text.
LIMIT = 300

# Unicode categories escaped besides the C0/C1 controls (Cc): format characters
# (bidi overrides and isolates, zero-width joiners, soft hyphen: Cf), lone
# surrogates (Cs), private use (Co), unassigned code points (Cn) and the line
# and paragraph separators (Zl, Zp), which some terminals treat as line ends.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def _escape_char(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escaped(text: str) -> str:
    """``text`` with every control, format and separator character written as
    a visible escape (``\\x1b``, ``\\u202e``); printable text is unchanged.
    Never shortens: for a line of output, use ``shown``."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(_escape_char(ch) if (ch != " " and unicodedata.category(ch) in _ESCAPED_CATEGORIES)
                   else ch for ch in text)


def shown(text: object, limit: int = LIMIT) -> str:
    """Input-derived text as it may be shown to a person: at most ``limit``
    characters of it (then "... [N more characters]"), each control, format
    or separator character escaped. The result holds no line break and no
    terminal control, whatever ``text`` holds."""
    if not isinstance(text, str):
        text = str(text)
    if len(text) > limit:
        return escaped(text[:limit]) + f"... [{len(text) - limit} more characters]"
    return escaped(text)


def safe_lines(message: str, line_limit: int = 4000) -> str:
    """A message built by pbem (which may contain input-derived parts) made
    safe to print as a last line of defence: every line keeps its line break
    but has its other control characters escaped, and no line is longer
    than ``line_limit`` characters. The input-derived parts themselves are
    cut to ``LIMIT`` where the message is built (``shown``)."""
    return "\n".join(shown(line, line_limit) for line in message.split("\n"))
