"""`memory opensearch check` on the security plugin's do_not_fail_on_forbidden (issue 58): on, a request naming
several indices leaves out the forbidden ones without an error, which would hide a missing permission; the check
says so, read from the plugin's config when the user may read it (the admin), else seen from the plugin's answer
(a least-privilege user holding exactly the role `memory opensearch role` prints). Off, it says nothing. On the
secured node; the setting is put back whatever happens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from service.container import build_services, open_mirror_maintenance
from service.search.opensearch.role import role
from service.search.opensearch.templates import Names
from tests.opensearch.conftest import mirrored_settings
from tests.support.clusters import Cluster

pytestmark = [pytest.mark.opensearch, pytest.mark.secured]


@pytest.fixture
def forbidden_answers_empty(request: pytest.FixtureRequest) -> Iterator[Callable[[bool], None]]:
    node = request.getfixturevalue("secured_opensearch")

    def setting(on: bool) -> None:
        node.set_security_config("do_not_fail_on_forbidden", on)

    yield setting
    setting(False)


def _notes(tmp_path: Path, cluster: Cluster, prefix: str) -> list[str]:
    settings = mirrored_settings(tmp_path, f"sqlite:///{tmp_path}/memory.db", cluster, prefix)
    with build_services(settings) as services:
        maintenance = open_mirror_maintenance(settings, services.db, services.embedder)
        try:
            maintenance.install()  # the templates, the pipeline and the shared indices (install=auto's role may)
            assert maintenance.check_cluster() == []
            return maintenance.security_notes()
        finally:
            maintenance.close()


def test_the_check_names_do_not_fail_on_forbidden(tmp_path: Path, real_opensearch: Cluster, prefix: str,
                                                   as_user: Callable[[str, dict], Cluster],
                                                   forbidden_answers_empty: Callable[[bool], None]) -> None:
    least = as_user(f"dnfof-{prefix}", role(Names(prefix), install="auto"))
    assert real_opensearch.admin is not None
    admin = Cluster(real_opensearch.url, *real_opensearch.admin, real_opensearch.ca_file, real_opensearch.admin)
    assert _notes(tmp_path / "off", least, prefix) == []  # off: a refusal stays a refusal
    forbidden_answers_empty(True)
    seen = _notes(tmp_path / "on", least, prefix)
    assert len(seen) == 1 and "do_not_fail_on_forbidden: true" in seen[0], seen
    assert "answered without it" in seen[0] and f"--prefix {prefix}" in seen[0]
    read = _notes(tmp_path / "admin", admin, prefix)
    assert len(read) == 1 and "the plugin's config says so" in read[0], read
