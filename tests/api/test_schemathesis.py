"""Property-based check of the REST face against its own /openapi.json (schemathesis), on a real uvicorn
server with a populated profile and its token: no 5xx, no undocumented status, every body and header as
documented, schema-violating requests refused. Bounded and deterministic (fixed examples per operation,
derandomised), a few seconds in all; a future 5xx or undocumented status fails the suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.generation import GenerationMode

from service.api.app import create_app
from service.config import Settings
from service.container import build_services
from tests.conftest import make_profile
from tests.support.server import running

EXAMPLES = 40  # per operation and mode (positive, negative); 9 operations


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[schemathesis.BaseSchema, dict[str, str]]]:
    """The schema of a live server whose profile alpha holds active, superseded and retired facts and a
    query log; and alpha's Authorization header."""
    directory: Path = tmp_path_factory.mktemp("schemathesis")
    services = build_services(Settings(data_dir=directory, embedder="none"))
    try:
        alpha = make_profile(services, "alpha")
        make_profile(services, "beta")
        ref = services.profiles.get("alpha")
        first = services.facts.write(ref, title="Deploys", text="Argo CD.", kind="project", tags=["infra", "c#"])
        services.facts.update(ref, first.fact.uid, text="Flux.", title="Deploys (Flux)")
        gone = services.facts.write(ref, title="Old", text="Gone.", kind="decision", tags=[]).fact.uid
        services.facts.forget(ref, gone, reason="obsolete")
        services.search.search(ref, "deploys", tags=["infra"])
        services.search.search(ref, "nothing like this")
        config = SchemathesisConfig.from_dict({
            "generation": {"mode": "all", "max-examples": EXAMPLES, "deterministic": True, "database": "none"},
            "checks": {"enabled": False, **{name: {"enabled": True} for name in (
                "not_a_server_error", "status_code_conformance", "content_type_conformance",
                "response_schema_conformance", "response_headers_conformance", "negative_data_rejection",
                "positive_data_acceptance", "missing_required_header", "unsupported_method",
                "allow_header_conformance", "ignored_auth")}},
            "phases": {"stateful": {"enabled": False}},
        })
        with running(create_app(services=services)) as url:
            yield schemathesis.openapi.from_url(f"{url}/openapi.json", config=config), alpha.headers
    finally:
        services.close()


# schemathesis' pytest plugin (schema.parametrize) does not run on pytest 9 (it reads Function._nodeid), so
# each operation's strategy is driven with hypothesis directly: the same cases and checks.
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_rest_answers_as_documented(api_schema: tuple[schemathesis.BaseSchema, dict[str, str]],
                                    mode: GenerationMode) -> None:
    schema, headers = api_schema
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9
    statuses: list[int] = []
    for operation in operations:
        if mode is GenerationMode.NEGATIVE and not operation.definition.raw.get("parameters"):
            continue  # nothing to break in a request without parameters

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def answers_as_documented(case: schemathesis.Case) -> None:
            if mode is GenerationMode.POSITIVE and "profile" in (case.path_parameters or {}):
                case.path_parameters["profile"] = "alpha"  # the token's profile: real answers, not only 401s
            statuses.append(case.call_and_validate(headers=headers).status_code)

        answers_as_documented()
    if mode is GenerationMode.POSITIVE:  # the profile's own data was read, not only refusals
        assert statuses.count(200) > 50 and 404 in statuses, sorted(set(statuses))
    else:
        assert set(statuses) <= {400, 401, 404}, sorted(set(statuses))
