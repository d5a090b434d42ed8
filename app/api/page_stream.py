"""A page that embeds a big view model, sent as a stream around the cache's bytes.

A 26 MB model spliced into one page string was copied five times while the GIL was held
(decoded, "<" escaped, spliced, rendered into the template, encoded), and then compressed in
one piece on the event loop: /healthz waited behind each copy (bench_heavy's pages). Here the
template is rendered small, with a mark where the page's JSON goes, and the model's bytes go
out between its two halves a slice at a time, each slice escaped as it is sent, so no step
holds the GIL or the loop for more than a slice."""

from __future__ import annotations

from collections.abc import AsyncIterator

from starlette.responses import Response, StreamingResponse

# Where the page's JSON goes in the rendered template: no template or state holds a NUL.
PAGE_MARK = "\u0000meshscope-page-json\u0000"
# Bytes escaped and sent per slice: ~1 ms of bytes.replace, and one compressor call each.
SLICE_BYTES = 1 << 20
ESCAPED = (b"<", b"\\u003c")  # page_data._script_safe's escape, on bytes


def split_page(html: str) -> tuple[str, str]:
    """The rendered page before and after PAGE_MARK."""
    before, mark, after = html.partition(PAGE_MARK)
    if not mark:
        raise ValueError("the template did not place page_json")
    return before, after


async def _pieces(before: str, model: bytes, after: str) -> AsyncIterator[bytes]:
    yield before.encode()
    for at in range(0, len(model), SLICE_BYTES):
        # "<" is one byte in UTF-8 and never part of another character's bytes, so a slice
        # may cut anywhere without the escape changing meaning.
        yield model[at : at + SLICE_BYTES].replace(*ESCAPED)
    yield after.encode()


def streamed(small: Response, json_before: str, model: bytes, json_after: str) -> Response:
    """``small`` (the page rendered with PAGE_MARK for its JSON) with the JSON
    ``json_before + model + json_after`` in the mark's place, streamed."""
    html_before, html_after = split_page(bytes(small.body).decode())
    headers = {k: v for k, v in small.headers.items() if k.lower() != "content-length"}
    return StreamingResponse(
        _pieces(html_before + json_before, model, json_after + html_after),
        status_code=small.status_code, headers=headers, media_type=small.media_type,
    )  # fmt: skip
