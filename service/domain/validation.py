"""Input rules (README "The five tools", docs/agents.md "The tools in detail", docs/reviewers.md "REST API";
profile names docs/operators.md "Command line"), in one place: both faces call these before anything is written.
The limits they apply are service.contract's."""

from __future__ import annotations

from collections.abc import Iterable

from service.contract import (
    KINDS, PROFILE_NAME, PROFILE_NAME_MAX, QUERY_MAX, REASON_MAX, TAG_INPUT, TAG_MAX, TAG_PADDING, TAGS_MAX, TEXT_MAX,
    TITLE_MAX, UID_MAX,
)
from service.errors import InvalidInput


def no_nul(value: str, param: str) -> str:
    """PostgreSQL cannot store NUL in text and SQLite can: refused on both, so both stores keep the same."""
    if "\x00" in value:
        raise InvalidInput(f"{param} must not contain NUL characters (\\x00)", param=param)
    return value


def profile_name(name: str) -> str:
    if not isinstance(name, str) or not PROFILE_NAME.match(name):
        raise InvalidInput(
            f"invalid profile name {name!r}: use 1-{PROFILE_NAME_MAX} characters of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit",
            param="profile",
        )
    return name


def _sized(value: str, param: str, maximum: int, advice: str = "") -> str:
    """At most `maximum` characters as sent (the input schema's maxLength counts them so), trimmed, not empty
    once trimmed, no NUL."""
    raw = value if isinstance(value, str) else ""
    cleaned = no_nul(raw.strip(), param)
    if not cleaned or len(raw) > maximum:
        got = len(raw) if len(raw) > maximum else 0
        raise InvalidInput(f"{param} must be 1-{maximum} characters (got {got}){advice}", param=param)
    return cleaned


def title(value: str) -> str:
    return _sized(value, "title", TITLE_MAX)


def text(value: str) -> str:
    return _sized(value, "text", TEXT_MAX, "; split long material into several facts")


def kind(value: str) -> str:
    """Exactly one of the six names, as every face's schema lists them (an enum): "Project" or " project" is
    refused, as REST's ?kind= and the MCP input schema refuse it, not read as "project"."""
    if not isinstance(value, str) or value not in KINDS:
        raise InvalidInput(f"unknown kind {value!r}: use one of {', '.join(KINDS)}", param="kind")
    return value


def tag(raw: str, param: str = "tags") -> str:
    """One tag as the input schema's pattern admits it (TAG_INPUT_PATTERN: 1-64 characters once trimmed), then
    trimmed and lower-cased: letters, digits and . _ : / + # -, starting with a letter or digit."""
    if not isinstance(raw, str):
        raise InvalidInput(f"{param} must be a list of strings" if param == "tags" else f"{param} must be a string",
                           param=param)
    if not TAG_INPUT.fullmatch(raw):
        raise InvalidInput(
            f"invalid tag {raw!r}: 1-{TAG_MAX} characters of a-z 0-9 . _ : / + # - starting with a letter or digit",
            param=param,
        )
    return raw.strip(TAG_PADDING).lower()


def tags(values: Iterable[str] | None, *, search: bool = False) -> list[str]:
    """Lower-case, trim, drop duplicates (first occurrence wins); at most 20 tags as sent (the input schema's
    maxItems counts them so, duplicates included) of 1-64 chars."""
    if values is None:
        return []
    if isinstance(values, str):
        raise InvalidInput("tags must be a list of strings", param="tags")
    sent = list(values)
    if len(sent) > TAGS_MAX:
        where = "in a search's tag filter" if search else "per fact"
        raise InvalidInput(f"at most {TAGS_MAX} tags {where} (got {len(sent)})", param="tags")
    result: list[str] = []
    for raw in sent:
        cleaned = tag(raw)
        if cleaned not in result:
            result.append(cleaned)
    return result


def query(value: str) -> str:
    return _sized(value, "query", QUERY_MAX)


def reason(value: str | None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput("reason must be a string", param="reason")
    cleaned = no_nul(value.strip(), "reason")
    if len(value) > REASON_MAX:  # as sent, as the input schema's maxLength counts
        raise InvalidInput(f"reason must be at most {REASON_MAX} characters", param="reason")
    return cleaned or None


def bounded_int(value: int, *, low: int, high: int, param: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(f"{param} must be an integer from {low} to {high}", param=param)
    return value


def uid(value: str) -> str:
    raw = value if isinstance(value, str) else ""
    cleaned = no_nul(raw.strip(), "uid")
    if not cleaned or len(raw) > UID_MAX:
        raise InvalidInput("uid must be a fact uid as returned by memory_write or memory_search", param="uid")
    return cleaned
