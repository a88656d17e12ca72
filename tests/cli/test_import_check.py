"""`memory import` checks the whole document before writing (issue 12): inconsistent histories are refused
with every problem and its location, exit code 1, nothing written. SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from service.container import build_services
from service.domain import portability


@pytest.fixture
def env(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url,
                       "MEMORY_EMBEDDER": "none"}.items():
        monkeypatch.setenv(key, value)


@pytest.fixture
def document(env: None) -> dict:
    """alpha's export: an active fact, a superseded one and its successor, a retired one, two searches."""
    with build_services(Settings()) as services:
        alpha = services.profiles.create("alpha")
        services.profiles.create("beta")
        services.facts.write(alpha, title="Editor", text="Uses Helix.", kind="preference", tags=["tools"])
        old = services.facts.write(alpha, title="Deploys", text="Argo CD.", kind="project", tags=[]).fact.uid
        services.facts.update(alpha, old, text="Flux.")
        gone = services.facts.write(alpha, title="Old", text="Gone.", kind="project", tags=[]).fact.uid
        services.facts.forget(alpha, gone, reason="obsolete")
        services.search.search(alpha, "deploys")
        services.search.search(alpha, "nothing like it")
        return portability.export_profile(services.store, alpha)


def import_(path: Path, profile: str = "beta") -> tuple[int, dict]:
    result = CliRunner().invoke(app, ["import", profile, str(path), "--json"])
    return result.exit_code, json.loads(result.output)


def counts(profile: str) -> tuple[int, int]:
    with build_services(Settings()) as services:
        ref = services.profiles.get(profile)
        stats = services.stats.stats(ref)
        return stats["facts"] + stats["retired"] + stats["superseded"], len(services.query_log.listing(ref, 500))


def for_beta(document: dict) -> dict:
    """alpha's history under uids of its own, links renamed consistently (uids are unique across profiles)."""
    moved = copy.deepcopy(document)
    for fact in moved["facts"]:
        for field in ("uid", "supersedes", "superseded_by"):
            if fact.get(field):
                fact[field] += "b"
    for row in moved["queries"]:  # the log names the same facts
        row["top_uid"] = row["top_uid"] and row["top_uid"] + "b"
        for result in row["results"]:
            result["uid"] += "b"
        row["inactive_uids"] = [uid + "b" for uid in row.get("inactive_uids") or []]
    return moved


def hit(d: dict) -> dict:
    return next(q for q in d["queries"] if q["top_uid"])


def by_status(document: dict, status: str) -> dict:
    return next(f for f in document["facts"] if f["status"] == status)


def loop(d: dict) -> None:
    old, new = by_status(d, "superseded"), next(f for f in d["facts"] if f.get("supersedes"))
    new["status"], new["superseded_by"], old["supersedes"] = "superseded", old["uid"], new["uid"]


BREAKAGES: dict[str, tuple[Callable[[dict], None], str, str]] = {
    "supersession loop": (loop, "superseded_by", "loop"),
    "link to a uid that does not exist": (
        lambda d: by_status(d, "superseded").update(superseded_by="f_nowhere"), "superseded_by", "neither"),
    "superseded without a successor": (
        lambda d: by_status(d, "superseded").update(superseded_by=None), "superseded_by", "successor"),
    "link that does not link back": (
        lambda d: by_status(d, "active").update(supersedes=by_status(d, "retired")["uid"]), "supersedes",
        "does not link back"),
    "retire reason of 100 KB": (
        lambda d: by_status(d, "retired").update(retire_reason="x" * 100_000), "retire_reason", "500"),
    "date in year 9999": (
        lambda d: by_status(d, "active").update(updated_at="9999-01-01T00:00:00+00:00"), "updated_at", "future"),
    "query in the future": (
        lambda d: d["queries"][0].update(created_at="9999-12-31T00:00:00+00:00"), "created_at", "future"),
    "retired without retired_at": (
        lambda d: by_status(d, "retired").update(retired_at=None), "retired_at", "retired_at"),
    "a search naming another profile's fact": (  # alpha's uid: exists, but in another profile
        lambda d: hit(d).update(top_uid=hit(d)["top_uid"][:-1]), "top_uid", "neither a fact of this file"),
    "a search that handed back a fact that does not exist": (
        lambda d: hit(d)["results"][0].update(uid="f_ghost"), "results", "neither a fact of this file"),
    "a search that returned more than its limit": (
        lambda d: hit(d).update(returned_count=hit(d)["limit"] + 1), "returned_count", "more than the row's limit"),
    "a top_uid on a search that returned nothing": (
        lambda d: hit(d).update(returned_count=0), "top_uid", "null exactly when"),
}


@pytest.mark.parametrize("name", list(BREAKAGES))
def test_an_inconsistent_history_is_refused_with_its_location(document: dict, tmp_path: Path, name: str) -> None:
    breakage, field, words = BREAKAGES[name]
    broken = for_beta(document)
    breakage(broken)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    code, out = import_(path)
    assert code == 1, out
    problems = out["error"]["problems"]
    assert any(p["field"] == field and words in p["problem"] for p in problems), problems
    assert all(p["where"].startswith(("facts[", "queries[")) for p in problems)
    assert counts("beta") == (0, 0)  # nothing written


def test_every_problem_is_listed_at_once_and_in_plain_text(document: dict, tmp_path: Path) -> None:
    broken = for_beta(document)
    for name in ("retire reason of 100 KB", "date in year 9999", "link to a uid that does not exist"):
        BREAKAGES[name][0](broken)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    code, out = import_(path)
    assert code == 1 and len(out["error"]["problems"]) >= 3
    uid = by_status(broken, "retired")["uid"]
    assert any(p["where"].endswith(f"(uid {uid})") for p in out["error"]["problems"])
    plain = CliRunner().invoke(app, ["import", "beta", str(path)])
    assert plain.exit_code == 1
    assert "retire_reason" in plain.output and "updated_at" in plain.output and "superseded_by" in plain.output


def test_links_to_another_profiles_facts_are_refused(document: dict, tmp_path: Path) -> None:
    moved = for_beta(document)
    successor = next(f for f in moved["facts"] if f.get("supersedes"))
    successor["supersedes"] = successor["supersedes"][:-1]  # alpha's uid: exists, but in another profile
    path = tmp_path / "foreign.json"
    path.write_text(json.dumps(moved))
    code, out = import_(path)
    assert code == 1
    assert any(p["field"] == "supersedes" and "neither in this file nor in this profile" in p["problem"]
               for p in out["error"]["problems"])
    assert counts("beta") == (0, 0)
    # alpha's own uids into beta are no problem (issue 24): they are copied under new uids (tests/domain/test_copy.py)


def test_a_consistent_history_still_imports_with_its_query_log(document: dict, tmp_path: Path) -> None:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(for_beta(document)))
    code, out = import_(path)
    assert code == 0, out
    assert (out["imported"], out["queries_imported"]) == (4, 2)
    assert counts("beta") == (4, 2)
