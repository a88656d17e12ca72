"""One place decides an error's body (service/error_bodies.py); each face's envelope is pinned here, over
the real faces: REST and the MCP endpoint over HTTP, the MCP tools through the SDK client, the CLI."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from service.api.app import create_app
from service.cli.main import app as cli_app
from service.container import Services
from service.domain.profiles import UNAUTHORIZED_MESSAGE
from service.error_bodies import ErrorInfo, cli_body, cli_lines, describe, jsonrpc_body, rest_body, tool_text
from service.errors import BackendUnavailable, InvalidDocument, NotFound, Unauthorized
from tests.api.conftest import LOOPBACK
from tests.conftest import ProfileAccess
from tests.support.mcp_client import call_error, mcp_client
from tests.support.server import running

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def test_one_description_in_every_envelope() -> None:
    info = describe(NotFound("no fact 'f_x' in this profile", param="uid"))
    assert rest_body(404, info) == {"error": {"status": 404, "code": "not_found",
                                              "message": "no fact 'f_x' in this profile", "param": "uid"}}
    assert jsonrpc_body(404, info) == {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "no fact 'f_x' in this profile",
        "data": {"status": 404, "code": "not_found", "param": "uid"}}}
    assert cli_body(info) == {"error": {"code": "not_found", "message": "no fact 'f_x' in this profile",
                                        "param": "uid"}}
    assert cli_lines(info) == ["no fact 'f_x' in this profile"]
    assert tool_text(NotFound("no fact 'f_x' in this profile", param="uid")) == "no fact 'f_x' in this profile"


def test_json_rpc_codes_follow_the_status() -> None:
    assert jsonrpc_body(401, describe(Unauthorized("no")))["error"]["code"] == -32001
    assert jsonrpc_body(503, describe(BackendUnavailable("down")))["error"]["code"] == -32603
    assert [jsonrpc_body(s, ErrorInfo("x", "y"))["error"]["code"] for s in (400, 404, 421)] == [-32600] * 3


def test_an_inconsistent_document_lists_its_problems() -> None:
    problems = [{"where": "facts[0]", "field": "kind", "problem": "unknown kind 'x'"},
                {"where": "facts[1]", "field": "", "problem": "duplicate uid"}]
    info = describe(InvalidDocument(problems))
    assert cli_body(info)["error"]["problems"] == problems and cli_body(info)["error"]["code"] == "invalid_parameter"
    assert cli_lines(info) == ["the document has 2 problem(s), nothing was imported",
                               "  facts[0] kind: unknown kind 'x'", "  facts[1]: duplicate uid"]


@pytest.fixture
def client(services: Services) -> Iterator[TestClient]:
    with TestClient(create_app(services=services), **LOOPBACK) as test_client:  # type: ignore[arg-type]
        yield test_client


def test_rest_bodies(client: TestClient, alpha: ProfileAccess) -> None:
    missing = client.get("/api/alpha/facts/f_nope", headers=alpha.headers)
    assert (missing.status_code, missing.json()) == (404, {"error": {
        "status": 404, "code": "not_found", "message": "no fact 'f_nope' in this profile", "param": "uid"}})
    bad = client.get("/api/alpha/queries?limit=0", headers=alpha.headers)
    assert (bad.status_code, bad.json()) == (400, {"error": {
        "status": 400, "code": "invalid_parameter",
        "message": "invalid value for limit: input should be greater than or equal to 1", "param": "limit"}})
    refused = client.get("/api/alpha/stats")
    assert (refused.status_code, refused.json()) == (401, {"error": {
        "status": 401, "code": "unauthorized", "message": UNAUTHORIZED_MESSAGE}})
    assert refused.headers["www-authenticate"] == "Bearer"
    unknown = client.get("/api/alpha/nothing-here", headers=alpha.headers)
    assert (unknown.status_code, unknown.json()) == (404, {"error": {
        "status": 404, "code": "not_found", "message": "no such endpoint"}})


def test_mcp_endpoint_bodies(client: TestClient, alpha: ProfileAccess) -> None:
    refused = client.post("/mcp/alpha", json=LIST, headers={**MCP_HEADERS, "Authorization": "Bearer mem_wrong"})
    assert (refused.status_code, refused.json()) == (401, {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32001, "message": UNAUTHORIZED_MESSAGE, "data": {"status": 401, "code": "unauthorized"}}})
    assert refused.headers["www-authenticate"] == "Bearer"
    bad_id = client.post("/mcp/alpha", json={**LIST, "id": 1.5}, headers={**MCP_HEADERS, **alpha.headers})
    assert (bad_id.status_code, bad_id.json()) == (400, {"jsonrpc": "2.0", "id": None, "error": {
        "code": -32600, "message": "Invalid Request: a JSON-RPC request id must be a string or an integer",
        "data": {"status": 400, "code": "invalid_request"}}})
    nowhere = client.post("/mcp", json=LIST, headers=MCP_HEADERS)
    assert nowhere.status_code == 404
    assert nowhere.json()["error"]["data"] == {"status": 404, "code": "not_found"}
    assert nowhere.json()["error"]["message"].startswith("no profile in the URL: the MCP endpoint is /mcp/<profile>")


@pytest.mark.anyio
async def test_mcp_tool_error_text(services: Services, alpha: ProfileAccess) -> None:
    with running(create_app(services=services)) as url:
        async with mcp_client(url, "alpha", alpha.token) as session:
            message = await call_error(session, "memory_forget", uid="f_doesnotexist")
    try:
        services.facts.forget(services.profiles.get("alpha"), "f_doesnotexist")
    except NotFound as exc:
        assert message == f"memory_forget: {tool_text(exc)}"
    else:
        raise AssertionError("forgetting an unknown uid must fail")


@pytest.fixture
def cli_env(tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in {"MEMORY_DATA_DIR": str(tmp_path), "MEMORY_DATABASE_URL": database_url,
                       "MEMORY_EMBEDDER": "none"}.items():
        monkeypatch.setenv(key, value)


def test_cli_bodies(cli_env: None) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli_app, ["token", "issue", "nobody", "--json"])
    message = "no profile named 'nobody' (there are no profiles yet; create it with: memory profile create nobody)"
    assert missing.exit_code == 1
    assert json.loads(missing.stdout) == {"error": {"code": "not_found", "message": message, "param": "profile"}}
    human = runner.invoke(cli_app, ["token", "issue", "nobody"])
    assert human.exit_code == 1 and human.stderr.strip() == f"error: {message}"
    config = runner.invoke(cli_app, ["profile", "list", "--json"], env={"MEMORY_SEARCH": "elastic"})
    assert config.exit_code == 1
    assert json.loads(config.stdout)["error"]["code"] == "invalid_configuration"



@pytest.mark.parametrize("url, says", [
    ("bogus://x", "not a database URL this service opens"),
    ("notaurl", "not a database URL this service opens"),
    ("mysql://me:hunter2@db.example/memory", "not a database URL this service opens"),
    ("sqlite://memory.db", "a SQLite URL names a file after three slashes"),
])
def test_a_database_url_the_service_cannot_open_is_a_configuration_error(cli_env: None, url: str, says: str) -> None:
    """Not a driver's traceback: one JSON error (or one line) naming the variable, the password masked."""
    runner = CliRunner()
    refused = runner.invoke(cli_app, ["profile", "list", "--json"], env={"MEMORY_DATABASE_URL": url})
    assert refused.exit_code == 1, refused.output
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "invalid_configuration" and "MEMORY_DATABASE_URL=" in error["message"]
    assert says in error["message"] and "hunter2" not in refused.output
    human = runner.invoke(cli_app, ["profile", "list"], env={"MEMORY_DATABASE_URL": url})
    assert human.exit_code == 1 and human.stderr.startswith("error: invalid configuration: MEMORY_DATABASE_URL=")


def test_a_postgresql_that_refuses_the_connection_is_one_clear_error(cli_env: None) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql://me:hunter2@127.0.0.1:{port}/memory"
    refused = CliRunner().invoke(cli_app, ["profile", "list", "--json"], env={"MEMORY_DATABASE_URL": url})
    assert refused.exit_code == 1, refused.output
    error = json.loads(refused.stdout)["error"]  # the setting and what to check (tests/store/test_opening.py)
    assert error["code"] == "backend_unavailable" and error["message"].startswith("MEMORY_DATABASE_URL=")
    assert "connection refused" in error["message"]
    assert "hunter2" not in refused.output and "Traceback" not in refused.output

def test_input_refused_by_a_schema_reads_the_same_on_every_face() -> None:
    """pydantic's errors are read in one place (error_bodies.input_problems): the argument named, pydantic's
    words lower-cased after it, the refused value shown as the caller wrote it."""
    from pydantic import BaseModel, StrictInt, ValidationError

    from service.error_bodies import input_problems

    class Arguments(BaseModel):
        limit: StrictInt
        query: str

    with pytest.raises(ValidationError) as raised:
        Arguments.model_validate({"limit": True})
    limit, query = input_problems(raised.value.errors())
    assert (limit.where, limit.message, limit.shown(), limit.missing) == (
        "limit", "input should be a valid integer", "true", False)
    assert (query.where, query.missing, query.shown()) == ("query", True, "{'limit': True}")
    assert input_problems([{"loc": ("query", "days"), "msg": "Value error, Too many.", "input": "x" * 60}],
                          skip=("query",))[0].shown() == repr("x" * 60)[:37] + "..."
    assert input_problems([{"loc": (), "msg": "Value error, A and B together."}])[0].where is None
