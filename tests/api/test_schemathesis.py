"""Property-based check of the REST face against its own /openapi.json (schemathesis), on a real uvicorn
server with a populated profile and its token: no 5xx, no undocumented status, every body and header as
documented, schema-violating requests refused, and a method a path does not take answered 405 with an Allow
header naming exactly the methods it does. Both of schemathesis' generating phases run: coverage (boundary
values, each parameter broken in turn, the methods a path does not take) and fuzzing (hypothesis). Bounded and
deterministic (fixed examples per operation, derandomised), half a minute in all; a future 5xx, undocumented
status or accepted schema violation fails the suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.config import SchemathesisConfig
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation import GenerationMode
from schemathesis.generation.meta import CoveragePhaseData
from schemathesis.specs.openapi.checks import positive_data_acceptance

from service.api.app import create_app
from service.config import Settings
from service.container import build_services
from service.contract import PROFILE_NAME
from tests.conftest import make_profile
from tests.support.server import running

pytestmark = pytest.mark.process  # not in the fast tier (Makefile FAST)

EXAMPLES = 40  # per operation and mode (positive, negative) in the fuzzing phase; 14 operations


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[schemathesis.BaseSchema, dict[str, str]]]:
    """The schema of a live server whose profile alpha holds active, superseded and retired facts and a
    query log; and alpha's Authorization header."""
    directory: Path = tmp_path_factory.mktemp("schemathesis")
    with build_services(Settings(data_dir=directory, embedder="none")) as services:
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


def _broken(case: schemathesis.Case) -> set[ParameterLocation]:
    """The parts of the request a negative case means to break: in the coverage phase the one it names (the
    other parts hold stand-in values, valid or not), in fuzzing each it generated as negative."""
    meta = case.meta
    if meta is None:
        return set()
    if isinstance(meta.phase.data, CoveragePhaseData):
        location = meta.phase.data.parameter_location
        return {location} if location is not None and meta.generation.mode.is_negative else set()
    return {location for location, component in meta.components.items() if component.mode.is_negative}


def _send(case: schemathesis.Case, headers: dict[str, str], statuses: list[int]) -> None:
    """Call and check the case as the token's owner, so that it reaches the route instead of a 401: the
    profile in the path becomes alpha unless the case breaks it, and the token goes along unless the case
    breaks the headers (a missing or malformed Authorization header, which must be refused with a 401)."""
    broken = _broken(case)
    profile = (case.path_parameters or {}).get("profile")
    if profile is not None and (ParameterLocation.PATH not in broken or PROFILE_NAME.fullmatch(str(profile))):
        case.path_parameters["profile"] = "alpha"
        _ = case.meta  # reading it revalidates the case's metadata against the path it now has
    query = case.query or {}
    # The facts listing's time window: `since` after `until`, or either with as_of, is a documented 400 that no
    # schema can state (it spans two parameters), so valid parts may make a refused whole there.
    crossed = {"since", "until"} <= set(query) or ("as_of" in query and {"since", "until"} & set(query))
    statuses.append(case.call_and_validate(headers=None if ParameterLocation.HEADER in broken else headers,
                                           excluded_checks=[positive_data_acceptance] if crossed else None)
                    .status_code)


# schemathesis' pytest plugin (schema.parametrize) does not run on pytest 9 (it reads Function._nodeid), so
# each operation's cases are driven directly: the coverage phase's list, then a hypothesis strategy.
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_rest_answers_as_documented(api_schema: tuple[schemathesis.BaseSchema, dict[str, str]],
                                    mode: GenerationMode) -> None:
    schema, headers = api_schema
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 14
    statuses: list[int] = []
    for operation in operations:
        for case in schema.iter_coverage_cases(operation, generation_modes=[mode],
                                               generation_config=schema.config.generation_for(operation=operation)):
            _send(case, headers, statuses)
        if mode is GenerationMode.NEGATIVE and not operation.definition.raw.get("parameters"):
            continue  # nothing to break in a request without parameters

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def answers_as_documented(case: schemathesis.Case) -> None:
            _send(case, headers, statuses)

        answers_as_documented()
    if mode is GenerationMode.POSITIVE:  # the profile's own data was read, not only refusals
        assert statuses.count(200) > 50 and 404 in statuses, sorted(set(statuses))
    else:  # refused (405: the methods a path does not take; an unknown query parameter is a 400 before a
        # lookup could 404), but for what the checks accept as ignored: a Content-Type on a GET without a body
        assert {400, 401, 405} <= set(statuses) <= {200, 400, 401, 404, 405}, sorted(set(statuses))
