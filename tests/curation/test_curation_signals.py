"""Issue 39 end to end: facts written and searched over MCP (the SDK's client, a live server, the real model),
then read as a reviewer does (REST) and resolved as an operator does (the CLI), on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from service.cli.main import app
from service.config import Settings
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call, mcp_client

pytestmark = pytest.mark.anyio

FACTS = {
    "A1": ("Deploys go out on Tuesdays", "The team ships production deploys every Tuesday afternoon.", "project"),
    "A2": ("Production deploys happen on Tuesday", "Every Tuesday afternoon the team deploys to production.",
           "project"),
    "B1": ("Use pnpm for the frontend", "The frontend project uses pnpm as its package manager, not npm.",
           "preference"),
    "B2": ("The frontend package manager is pnpm", "For the frontend, pnpm is the package manager; do not use npm.",
           "preference"),
    "C": ("Postgres listens on port 5433", "The local PostgreSQL server for development listens on port 5433.",
          "reference"),
    "D": ("Alice prefers dark mode", "Alice wants dark mode in every editor and terminal she uses.", "user"),
    "E": ("REST API versions live in the URL path",
          "We decided to version the public REST API with a /v1 prefix in the path.", "decision"),
}
POSTGRES_QUERIES = ["which port does the local postgres listen on", "postgresql development port",
                    "database port 5433"]


def cli(settings: Settings, *args: str) -> tuple[int, str]:
    env = {"MEMORY_DATA_DIR": str(settings.data_dir), "MEMORY_DATABASE_URL": settings.database_url,
           "MEMORY_EMBEDDER": "minilm"}
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.output


def get(base_url: str, who: ProfileAccess, path: str) -> dict:
    response = httpx.get(f"{base_url}/api/{who.name}{path}", headers=who.headers)
    assert response.status_code == 200, response.text
    return response.json()


async def test_recalls_never_recalled_duplicates_and_resolve(base_url: str, alpha: ProfileAccess,
                                                             beta: ProfileAccess, settings: Settings) -> None:
    uid: dict[str, str] = {}
    similar: dict[str, list[str]] = {}
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        for key, (title, text, kind) in FACTS.items():
            written = await call(client, "memory_write", title=title, text=text, kind=kind)
            uid[key] = written["fact"]["uid"]
            similar[key] = [f["uid"] for f in written.get("similar", [])]
        returned = []
        for query in POSTGRES_QUERIES:
            found = await call(client, "memory_search", query=query, limit=1)
            returned.append([f["uid"] for f in found["facts"]])
        await call(client, "memory_search", query="sourdough starter feeding schedule")  # a miss
    assert similar["A2"] == [uid["A1"]] and similar["B2"] == [uid["B1"]]  # what memory_write called `similar`
    assert returned == [[uid["C"]]] * 3

    # recall counts on every REST fact body
    c = get(base_url, alpha, f"/facts/{uid['C']}")["fact"]
    assert c["recalled_count"] == 3 and c["last_recalled_at"] is not None
    newest_search = get(base_url, alpha, "/queries?limit=2")["queries"][1]
    assert c["last_recalled_at"] == newest_search["created_at"]
    d = get(base_url, alpha, f"/facts/{uid['D']}")["fact"]
    assert (d["recalled_count"], d["last_recalled_at"]) == (0, None)
    listed = {f["uid"]: f for f in get(base_url, alpha, "/facts")["facts"]}
    assert listed[uid["C"]]["recalled_count"] == 3 and listed[uid["D"]]["recalled_count"] == 0

    # never recalled: exactly the active facts no logged search returned
    ever = {r["uid"] for q in get(base_url, alpha, "/queries")["queries"]
            for r in get(base_url, alpha, f"/queries/{q['id']}")["query"]["results"]}
    never = [f["uid"] for f in get(base_url, alpha, "/facts?recalled=never")["facts"]]
    assert set(never) == set(uid.values()) - ever and len(never) == len(never and set(never))
    assert never == sorted(never, key=lambda u: list(uid.values()).index(u), reverse=True)  # newest first
    most = get(base_url, alpha, "/facts?order=recalled&limit=1")
    assert most["facts"][0]["uid"] == uid["C"] and most["next_cursor"] == f"r3.{most['next_cursor'].split('.')[1]}"

    # duplicates: both pairs memory_write called similar, and no other fact
    report = get(base_url, alpha, "/duplicates")
    groups = [sorted(f["uid"] for f in g["facts"]) for g in report["groups"]]
    assert sorted(groups) == sorted([sorted([uid["A1"], uid["A2"]]), sorted([uid["B1"], uid["B2"]])])
    assert report["compared"] == len(FACTS) and report["without_vector"] == 0
    assert all(0.75 <= g["similarity"] <= 1 and g["command"].startswith("memory duplicates resolve alpha --keep ")
               for g in report["groups"])

    # the CLI shows the same groups and resolves one
    code, out = cli(settings, "duplicates", "alpha", "--json")
    assert code == 0, out
    assert [sorted(f["uid"] for f in g["facts"]) for g in json.loads(out)["groups"]] == groups
    code, out = cli(settings, "duplicates", "alpha")
    assert code == 0 and "2 group(s) of near-duplicates in alpha" in out and f"--keep" in out
    code, out = cli(settings, "duplicates", "resolve", "alpha", "--keep", uid["A1"], "--retire", uid["A2"], "--json")
    assert code == 0, out
    assert json.loads(out) == {"profile": "alpha", "kept": uid["A1"], "retired": [uid["A2"]]}
    a2 = get(base_url, alpha, f"/facts/{uid['A2']}")["fact"]
    assert a2["status"] == "retired" and uid["A1"] in a2["retire_reason"]
    report = get(base_url, alpha, "/duplicates")
    assert [sorted(f["uid"] for f in g["facts"]) for g in report["groups"]] == [sorted([uid["B1"], uid["B2"]])]
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        found = await call(client, "memory_search", query="which day do production deploys happen")
    assert uid["A2"] not in [f["uid"] for f in found["facts"]] and uid["A1"] in [f["uid"] for f in found["facts"]]
    assert uid["A2"] not in [f["uid"] for f in get(base_url, alpha, "/facts?recalled=never")["facts"]]

    # refusals: nothing changes
    async with mcp_client(base_url, "beta", beta.token) as client:
        other = (await call(client, "memory_write", title="Beta fact", text="Beta keeps its own notes.",
                            kind="reference"))["fact"]["uid"]
    code, out = cli(settings, "duplicates", "resolve", "alpha", "--keep", uid["B1"], "--retire", other)
    assert code == 1 and "belongs to another profile" in out
    code, out = cli(settings, "duplicates", "resolve", "alpha", "--keep", uid["B1"], "--retire", uid["B2"],
                    "--retire", uid["A2"])
    assert code == 1 and "not active" in out
    code, out = cli(settings, "duplicates", "resolve", "alpha", "--keep", uid["B1"], "--retire", uid["B1"])
    assert code == 1 and "cannot be retired too" in out
    assert get(base_url, alpha, f"/facts/{uid['B2']}")["fact"]["status"] == "active"


async def test_order_recalled_pages_through_every_fact_once(base_url: str, alpha: ProfileAccess) -> None:
    async with mcp_client(base_url, "alpha", alpha.token) as client:
        for i in range(6):
            await call(client, "memory_write", title=f"Service {i} owner", text=f"Team {i} owns service number {i}.",
                       kind="project")
        for i in range(4):
            await call(client, "memory_search", query=f"who owns service number {i}", limit=1 + i % 2)
    seen, cursor, counts = [], None, []
    while True:
        page = get(base_url, alpha, "/facts?order=recalled&limit=2" + (f"&cursor={cursor}" if cursor else ""))
        seen += [f["uid"] for f in page["facts"]]
        counts += [f["recalled_count"] for f in page["facts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen)) == 6 and counts == sorted(counts, reverse=True) and sum(counts) == 6
    # a cursor of the other order is a position too: the page starts after the fact it names
    newest = get(base_url, alpha, "/facts?limit=50")["facts"]
    third = int(get(base_url, alpha, "/facts?limit=3")["next_cursor"][1:])  # the id of newest[2]
    by_id = get(base_url, alpha, f"/facts?cursor=r0.{third}")["facts"]
    assert [f["uid"] for f in by_id] == [f["uid"] for f in newest[3:]]
    ranked = [f["uid"] for f in get(base_url, alpha, "/facts?order=recalled&limit=50")["facts"]]
    after = [f["uid"] for f in get(base_url, alpha, f"/facts?order=recalled&cursor=f{third}")["facts"]]
    assert after == ranked[ranked.index(newest[2]["uid"]) + 1:]
    # with as_of: the facts as they stood then, filtered and ordered by the counts now
    then = get(base_url, alpha, "/facts?order=recalled&as_of=2999-01-01&limit=50")["facts"]
    assert [f["uid"] for f in then] == ranked
    assert get(base_url, alpha, "/facts?recalled=never&as_of=2000-01-01")["facts"] == []
    never_then = get(base_url, alpha, "/facts?recalled=never&as_of=2999-01-01")["facts"]
    never_now = get(base_url, alpha, "/facts?recalled=never")["facts"]
    assert [f["uid"] for f in never_then] == [f["uid"] for f in never_now] and len(never_now) == 6 - len(set(
        uid for uid, count in zip(seen, counts) if count))
