"""What an error quotes of a user's input: at most ECHO_LIMIT characters of it.

A refused value is quoted so the user sees what was read, but a 10 kB ``?model=`` must not
come back 10 kB long in every message that names it (the page, the JSON 422, each point of
a sweep). ``echo`` gives the quote as a ``str`` (its English wording, what the core's reasons
carry) that also keeps ``head`` and ``length``, so a page in another language can word the cut
itself (``app/i18n/errors.py``).
"""

from __future__ import annotations

ECHO_LIMIT = 80


class Echo(str):
    """A quoted input: ``'abc'``, or ``'abc…' (10,000 characters)`` when it was cut.
    ``head`` is the quote without the length; ``length`` the input's length when cut, else
    None."""

    head: str
    length: int | None

    def __new__(cls, head: str, length: int | None = None) -> Echo:
        text = head if length is None else f"{head} ({length:,} characters)"
        out = super().__new__(cls, text)
        out.head, out.length = head, length
        return out

    def __reduce__(self) -> tuple:  # copy and pickle keep the parts, not only the text
        return (Echo, (self.head, self.length))


def echo(value: object, limit: int = ECHO_LIMIT, quote: bool = True) -> Echo:
    """``value`` as an error quotes it (``repr`` when ``quote``), cut past ``limit``
    characters with an ellipsis and the original length."""
    text = value if isinstance(value, str) else str(value)
    if len(text) <= limit:
        return Echo(repr(text) if quote else text)
    head = repr(text[:limit]) if quote else text[:limit]
    head = f"{head[:-1]}…{head[-1]}" if quote else f"{head}…"
    return Echo(head, len(text))
