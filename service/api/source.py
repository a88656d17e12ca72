"""The X-Memory-Source header of the aggregate routes: where an answer came from, in HTTP's words."""

from __future__ import annotations

from fastapi import Response

from service.domain.ports import Sourced

HEADER = "X-Memory-Source"


def set_source(response: Response, result: Sourced) -> None:
    """`opensearch`, or the canonical store with the reason the mirror was not used
    (`postgres; reason=mirror-lagging`); no header when only the canonical store exists."""
    if result.source:
        response.headers[HEADER] = result.source if result.reason is None else f"{result.source}; reason={result.reason}"
