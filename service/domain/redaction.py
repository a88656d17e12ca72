"""Redaction without deletion (`memory redact UID --reason ...`, run by the operator; not an MCP tool).

A fact that holds a secret or personal data keeps its row, uid, kind, tags, timestamps and chain links; its
title and text (and every earlier title in its revisions) become MARKER, its vector is dropped, the search
indexes drop its entry (the embedded index on its next sync, the OpenSearch mirror through the outbox), and
a FactRedaction records who, when, why and the SHA-256 of the removed text and title. An active fact is
retired. Query-log rows whose query contains the removed text, one of the removed titles, or a string the
operator names (`--match`), compared case-insensitively, get `[redacted R.N]` as their query (R the
redaction, N one number per distinct query text, so distinct queries stay distinct); their counts stay.
Strings shorter than MATCH_MIN are not looked for in the query log (they would match nearly every search).

A search usually holds only part of a fact: the run reports the searches left that share a long word
(LONG_WORD characters or more) with the removed words, and suggests `--match`. Redacting a redacted fact
again with a new `--match` finishes the job: the searches that string still matches are redacted too (numbered
after the first run's) and the record's count of redacted searches grows; without one, it changes nothing
and says so.

A successor of a redacted fact (a text change superseded it) keeps its own text: it is another fact,
redacted on its own if it holds the secret too.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from service import clock, contract
from service.domain import lifecycle, validation
from service.domain.models import FactStatus
from service.domain.ports.canonical import CanonicalStore, UnitOfWork
from service.domain.ports.records import FactRecord, RedactionRecord
from service.errors import InvalidInput, NotFound

log = logging.getLogger(__name__)

MARKER = "[redacted]"
MATCH_MIN = 4
LONG_WORD = 8  # a search sharing a word this long with the removed text is reported, with `--match` advice
SUGGESTIONS_MAX = 10
QUERY_MARKER = re.compile(r"^\[redacted (\d+)\.(\d+)\]$")
# Words as an operator would name them: runs of letters and digits, and such runs joined by . _ - : / + # @
# (a token such as tok_live_1a2b, a host name, a path), so both `deploy` and `deploy-token-2024` are words.
WORD = re.compile(r"[^\W_]+(?:[._\-:/+#@][^\W_]+)*")
OPERATOR_MAX = 200


def sha256(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def query_marker(redaction_id: int, number: int) -> str:
    return f"[redacted {redaction_id}.{number}]"


def record_dict(record: RedactionRecord | None) -> dict[str, Any] | None:
    """The redaction as the fact's history shows it (REST, export)."""
    if record is None:
        return None
    return {
        "redacted_at": clock.isoformat(record.redacted_at),
        "operator": record.operator,
        "reason": record.reason,
        "text_sha256": record.text_sha256,
        "title_sha256": record.title_sha256,
        "revisions_redacted": record.revisions,
        "queries_redacted": record.queries,
        "retired": record.retired,
    }


def reason_text(value: str) -> str:
    cleaned = value.strip() if isinstance(value, str) else ""
    if not cleaned:
        raise InvalidInput("a redaction needs a reason (--reason \"...\"): it is kept with the fact", param="reason")
    return validation.reason(cleaned) or cleaned


def operator_name(value: str) -> str:
    cleaned = value.strip() if isinstance(value, str) else ""
    if not 1 <= len(cleaned) <= OPERATOR_MAX or "\x00" in cleaned:
        raise InvalidInput(f"operator must be 1-{OPERATOR_MAX} characters (got {len(cleaned)})", param="operator")
    return cleaned


def match_strings(values: list[str]) -> list[str]:
    out = []
    for value in values:
        cleaned = value.strip() if isinstance(value, str) else ""
        if not MATCH_MIN <= len(cleaned) <= contract.QUERY_MAX or "\x00" in cleaned:
            raise InvalidInput(f"--match strings must be {MATCH_MIN}-{contract.QUERY_MAX} characters "
                               f"(got {len(cleaned)}): a shorter one would match nearly every search", param="match")
        out.append(cleaned)
    return out


def needles(title: str, text: str, revision_titles: list[str], also: list[str]) -> list[str]:
    """What a query must contain (case-insensitively) to be redacted with the fact."""
    found: dict[str, None] = {}
    for value in (text, title, *revision_titles, *also):
        folded = value.strip().casefold()
        if len(folded) >= MATCH_MIN and folded != MARKER:
            found[folded] = None
    return list(found)


def contains_any(value: str, wanted: list[str]) -> bool:
    folded = value.casefold()
    return any(n in folded for n in wanted)


def matching_queries(texts: list[tuple[int, str]], wanted: list[str]) -> list[int]:
    """Ids of the query-log rows to redact (rows redacted before are left as they are)."""
    return [i for i, q in texts if not QUERY_MARKER.match(q) and contains_any(q, wanted)]


def long_words(*values: str) -> set[str]:
    """The words of LONG_WORD characters or more (case-folded), whole compounds and their parts."""
    words: set[str] = set()
    for value in values:
        for compound in WORD.findall(value.casefold()):
            words.update(w for w in (compound, *re.findall(r"[^\W_]+", compound)) if len(w) >= LONG_WORD)
    words.discard(MARKER.strip("[]"))
    return words


def sharing_long_words(texts: list[tuple[int, str]], skip: set[int], words: set[str]) -> list[dict[str, Any]]:
    """Searches not redacted that share a long word with the removed words: each word with how many."""
    counts: dict[str, int] = {}
    for row_id, query in texts:
        if row_id in skip or QUERY_MARKER.match(query):
            continue
        for word in long_words(query) & words:
            counts[word] = counts.get(word, 0) + 1
    # A part is named only when more searches share it than the whole it belongs to (tok_live_9f8e, not 9f8e).
    kept = {w: n for w, n in counts.items() if not any(w != o and w in o and m >= n for o, m in counts.items())}
    ranked = sorted(kept.items(), key=lambda item: (-item[1], item[0]))[:SUGGESTIONS_MAX]
    return [{"word": word, "searches": count} for word, count in ranked]


def next_marker_number(texts: list[tuple[int, str]], redaction_id: int) -> int:
    numbers = [int(m.group(2)) for _, q in texts if (m := QUERY_MARKER.match(q)) and int(m.group(1)) == redaction_id]
    return max(numbers, default=0) + 1


@dataclass
class RedactionResult:
    profile: str
    uid: str
    status: str
    already: bool
    dry_run: bool
    record: dict[str, Any] | None
    queries: int  # query-log rows redacted now (or that would be, on a dry run)
    revisions: int
    vector_dropped: bool = False
    extended: bool = False  # a run on a redacted fact whose --match redacted more searches
    # searches left that share a long word with the removed words: [{word, searches}] (first run, dry run)
    suggestions: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return not self.dry_run and (not self.already or self.extended)

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile, "uid": self.uid, "status": self.status, "already_redacted": self.already,
            "dry_run": self.dry_run, "extended": self.extended, "redaction": self.record,
            "queries_redacted": self.queries, "revisions_redacted": self.revisions,
            "vector_dropped": self.vector_dropped, "sharing_long_words": self.suggestions, "notes": self.notes,
        }


class RedactionService:
    def __init__(self, store: CanonicalStore) -> None:
        self.store = store

    def redact(self, uid: str, *, reason: str, operator: str, also: list[str] | None = None,
               dry_run: bool = False) -> RedactionResult:
        uid, reason, operator = validation.uid(uid), reason_text(reason), operator_name(operator)
        extra = match_strings(list(also or []))
        with self.store.read() as uow:
            found = uow.facts.any_profile(uid)
            if found is None:
                raise NotFound(f"no fact {uid!r} in this store (`memory export NAME` lists a profile's facts)",
                               param="uid")
            profile_id = found.profile_id
            planned = self._plan(uow, found, extra, dry_run=dry_run) \
                if dry_run or (found.redacted_at is not None and not extra) else None
        if planned is not None:
            if not dry_run:  # a second run finishes what a busy checkpoint left
                planned.notes.extend(self.store.purge_old_pages())
            return planned
        now = clock.utcnow()
        with self.store.changing(profile_id) as uow:
            row = uow.facts.any_profile(uid, for_update=True)
            assert row is not None and row.id is not None
            if row.redacted_at is not None:  # redacted before (or meanwhile): the new --match strings only
                result = self._extend(uow, row, extra)
            else:
                result = self._apply(uow, row, now, reason=reason, operator=operator, also=extra)
        result.notes.extend(self.store.purge_old_pages())
        return result

    # --- steps ------------------------------------------------------------------------------------

    def _plan(self, uow: UnitOfWork, row: FactRecord, also: list[str], *, dry_run: bool) -> RedactionResult:
        """What a redaction would do (dry run), or the record of the one already done."""
        assert row.id is not None
        profile = uow.profiles.by_id(row.profile_id)
        assert profile is not None
        texts = list(uow.query_log.texts(row.profile_id))
        if row.redacted_at is not None:
            record = record_dict(uow.redactions.of(row.id))
            matching = matching_queries(texts, needles("", "", [], also))
            result = RedactionResult(profile=profile.name, uid=row.uid, status=row.status, already=True,
                                     dry_run=dry_run, record=record, queries=len(matching), revisions=0)
            if dry_run and also:
                result.notes.append(f"dry run: already redacted on {record and record['redacted_at']}; --match "
                                    f"would redact {len(matching)} more search(es); nothing was changed")
            else:
                result.notes.append(f"already redacted on {record and record['redacted_at']}: nothing changed; "
                                    "to redact searches that still hold part of its words, run it again with "
                                    "--match STRING")
            return result
        revisions = uow.revisions.of(row.id)
        titles = [r.title for r in revisions]
        matching = matching_queries(texts, needles(row.title, row.text, titles, also))
        result = RedactionResult(profile=profile.name, uid=row.uid, status=row.status, already=False, dry_run=True,
                                 record=None, queries=len(matching), revisions=len(revisions),
                                 notes=["dry run: nothing was changed"])
        self._suggest(result, texts, set(matching), long_words(row.title, row.text, *titles))
        return result

    def _apply(self, uow: UnitOfWork, row: FactRecord, now: datetime, *, reason: str, operator: str,
               also: list[str]) -> RedactionResult:
        assert row.id is not None
        profile = uow.profiles.by_id(row.profile_id)
        assert profile is not None
        revisions = uow.revisions.of(row.id)
        titles = [r.title for r in revisions]
        wanted = needles(row.title, row.text, titles, also)
        words = long_words(row.title, row.text, *titles)
        was_active = row.status == FactStatus.ACTIVE
        record = uow.redactions.new(
            profile_id=row.profile_id, fact_id=row.id, redacted_at=now, operator=operator, reason=reason,
            text_sha256=sha256(row.text), title_sha256=sha256(row.title), revisions=len(revisions), queries=0,
            retired=was_active,
        )
        uow.redactions.save(record)
        assert record.id is not None
        for revision in revisions:
            revision.title = MARKER
            uow.revisions.save(revision)
        if row.retire_reason and contains_any(row.retire_reason, wanted):
            row.retire_reason = MARKER
        if was_active:  # retired as memory_forget would: the counts move exactly as for a forget
            lifecycle.retire(row, now, f"redacted: {reason}"[: contract.REASON_MAX])
        row.title, row.text, row.redacted_at = MARKER, MARKER, now
        dropped = uow.vectors.drop(row.id)

        texts = list(uow.query_log.texts(row.profile_id))
        matching = self._redact_queries(uow, record, texts, wanted)
        record.queries = len(matching)
        uow.redactions.save(record)
        result = RedactionResult(profile=profile.name, uid=row.uid, status=row.status, already=False, dry_run=False,
                                 record=record_dict(record), queries=len(matching), revisions=len(revisions),
                                 vector_dropped=dropped)
        self._suggest(result, texts, set(matching), words)
        return result

    def _extend(self, uow: UnitOfWork, row: FactRecord, also: list[str]) -> RedactionResult:
        """A redacted fact, run again with --match: the searches those strings match are redacted too."""
        assert row.id is not None
        profile = uow.profiles.by_id(row.profile_id)
        record = uow.redactions.of(row.id)
        assert profile is not None and record is not None and record.id is not None
        wanted = needles("", "", [], also)
        if row.retire_reason and row.retire_reason != MARKER and contains_any(row.retire_reason, wanted) \
                and not row.retire_reason.startswith("redacted: "):
            row.retire_reason = MARKER
        texts = list(uow.query_log.texts(row.profile_id))
        matching = self._redact_queries(uow, record, texts, wanted)
        record.queries += len(matching)
        uow.redactions.save(record)
        result = RedactionResult(profile=profile.name, uid=row.uid, status=row.status, already=True, dry_run=False,
                                 record=record_dict(record), queries=len(matching), revisions=0,
                                 extended=bool(matching))
        result.notes.append(f"already redacted on {clock.isoformat(record.redacted_at)}; --match redacted "
                            f"{len(matching)} more search(es) ({record.queries} in all)")
        return result

    @staticmethod
    def _redact_queries(uow: UnitOfWork, record: RedactionRecord, texts: list[tuple[int, str]],
                        wanted: list[str]) -> list[int]:
        """Replace the matching searches' text with `[redacted R.N]`, one N per distinct text (after the numbers
        this redaction already gave), and send the changed rows to the mirror."""
        assert record.id is not None
        matching = matching_queries(texts, wanted)
        first = next_marker_number(texts, record.id)
        markers: dict[str, str] = {}
        for qrow in sorted(uow.query_log.by_ids(matching), key=lambda r: r.id or 0):
            marker = markers.setdefault(qrow.query, query_marker(record.id, first + len(markers)))
            qrow.query = marker
            uow.query_log.save(qrow)  # queued for the mirror by the store, as every rewritten row
        return matching

    @staticmethod
    def _suggest(result: RedactionResult, texts: list[tuple[int, str]], redacted: set[int], words: set[str]) -> None:
        result.suggestions = sharing_long_words(texts, redacted, words)
        if result.suggestions:
            total = sum(1 for i, q in texts if i not in redacted and not QUERY_MARKER.match(q)
                        and long_words(q) & words)
            named = ", ".join(f"{s['word']!r} ({s['searches']})" for s in result.suggestions)
            result.notes.append(
                f"{total} search(es) not redacted share a long word with the removed words (a search often holds "
                f"only part of a fact): {named}. If they hold the secret, run `memory redact {result.uid} --reason "
                f"... --match STRING` with the part to remove")
