"""Text clean-up shared by the answer parsers.

Models wrap their answers in a prefix that the prompt asked for ("The answer
is: ...", "Answer: ...", or the Chinese "答案是：..."), in quotes, in Markdown
bold, and end them with a period. :func:`strip_answer_prefix` removes exactly
that wrapping and leaves the answer text itself untouched (no case folding, no
width folding), because ROUGE compares the remaining text token by token.

:func:`nfkc` folds fullwidth forms (``３``, ``，``, ``：``, ``Ｂ``) to ASCII for
the parsers that read numbers and letters out of a reply.
"""

from __future__ import annotations

import re
import unicodedata

_COLON = r"[:：﹕]"
_BOLD = r"(?:\*\*|__)?"

#: A leading answer prefix. "The answer is" and "答案是" may be followed
#: directly by the answer; the bare "Answer"/"答案" need a colon, so that a
#: reply such as "答案不确定" or "Answers vary" is left alone.
#: Every whitespace run is possessive (``\s*+``, ``\s++``): it is taken whole once and never
#: given back, so two runs that meet (``\s*`` around an optional quote or bold) cannot split one
#: long run of spaces in every way. Before, ``"`` + 100,000 spaces + ``x`` took minutes (quadratic);
#: now one pass over the reply.
_PREFIX = re.compile(
    rf"""^\s*+(?P<quote>["'“‘「『`])?\s*+{_BOLD}\s*+(?:
        the\s++answer\s++is\b{_BOLD}\s*+(?:{_COLON})?
      | 答案是{_BOLD}\s*+(?:{_COLON})?
      | (?:answer|答案){_BOLD}\s*+{_COLON}
    )\s*+{_BOLD}""",
    re.IGNORECASE | re.VERBOSE,
)

#: Opening quote -> closing quote.
_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "「": "」", "『": "』", "`": "`"}
_QUOTE_CHARS = frozenset(_QUOTES) | frozenset(_QUOTES.values())

#: Text that is only an ellipsis or dots: a model echoing the prompt's
#: placeholder ("The answer is: …… ") without an answer.
_PLACEHOLDER = re.compile(r"^[\s.。…·]*$")


def nfkc(text: str) -> str:
    """Unicode NFKC: fullwidth digits, letters and punctuation become ASCII."""
    return unicodedata.normalize("NFKC", text)


def collapse_whitespace(text: str) -> str:
    return " ".join(text.split())


def _unquote(text: str) -> str:
    """Remove one pair of quotes around the whole text, when the inside has none."""
    if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
        inner = text[1:-1]
        if not _QUOTE_CHARS.intersection(inner):
            return inner.strip()
    return text


def _drop_trailing_period(text: str) -> str:
    """Remove one final "." / "。" / "．", but not the end of an ellipsis ("...")."""
    if text.endswith(("。", "．")):
        return text[:-1].rstrip()
    if text.endswith(".") and not text.endswith(".."):
        return text[:-1].rstrip()
    return text


def _strip_prefix(text: str) -> str:
    """Remove a leading answer prefix, and the closing quote when the prefix was quoted."""
    match = _PREFIX.match(text)
    if match is None:
        return text
    rest = text[match.end():].strip()
    opener = match.group("quote")
    if opener:
        rest = _drop_trailing_period(rest)
        if rest.endswith(_QUOTES[opener]):
            rest = rest[:-1].rstrip()
    return rest


def strip_answer_prefix(text: str) -> str:
    """Return the answer without its wrapping.

    Removes, in this order and repeatedly while something changes: surrounding
    whitespace, a pair of quotes around the whole reply, a leading "The answer
    is:", "Answer:", "答案是：" or "答案：" (case-insensitive, ASCII or fullwidth
    colon, optional Markdown bold), and one trailing period. A reply that is
    only the prompt's "……" placeholder becomes "". Line breaks inside the
    answer (several answer points) are kept.

    >>> strip_answer_prefix("'The answer is: 豆腐。'")
    '豆腐'
    """
    current = text
    for _ in range(4):  # a handful of rounds covers "'Answer: \"x\".'" nestings
        previous = current
        current = _unquote(current.strip())
        current = _strip_prefix(current)
        current = _drop_trailing_period(_unquote(current))
        if current == previous:
            break
    if _PLACEHOLDER.match(current):
        return ""
    return current
