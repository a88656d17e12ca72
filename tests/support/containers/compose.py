"""Compose v2 (`docker compose`), which compose.yaml is written for (a top-level `name:`, `!reset` in the override
for machines whose root cannot raise ulimits). The plugin found is used; else it is built from its Go module with
the machine's Go toolchain (the official source, through the Go module proxy) into ~/.docker/cli-plugins. Debian 12's
`docker-compose` is v1 and cannot run the files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.support.containers.engine import ContainersUnavailable

COMPOSE_MODULE = "github.com/docker/compose/v2"
COMPOSE_VERSION = "v2.40.3"
GO_DEFAULT = Path("/usr/local/go/bin/go")  # the official tarball's place, when it is not on PATH
PLUGIN = Path.home() / ".docker" / "cli-plugins" / "docker-compose"


def version() -> str | None:
    """`docker compose version --short` when it is v2, else None."""
    try:
        result = subprocess.run(["docker", "compose", "version", "--short"], capture_output=True, text=True,
                                timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = result.stdout.strip()
    return found if result.returncode == 0 and re.match(r"v?2\.", found) else None


def ensure(progress: Callable[[str], None] = print) -> str:
    """The v2 plugin's version, built first when there is none."""
    found = version()
    if found:
        progress(f"docker compose {found}")
        return found
    go = shutil.which("go") or (str(GO_DEFAULT) if GO_DEFAULT.exists() else None)
    if go is None:
        raise ContainersUnavailable("no Compose v2 plugin and no Go toolchain to build it: install docker-compose v2 "
                                    f"into {PLUGIN.parent}, or Go")
    started = time.monotonic()
    progress(f"building Compose {COMPOSE_VERSION} from {COMPOSE_MODULE} with {go} (once per machine)")
    # `go install module/cmd@version` refuses a module whose go.mod has replace/exclude directives (compose's
    # has): its source is downloaded through the module proxy, then built as the main module, as its Makefile does.
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod")
    download = subprocess.run([go, "mod", "download", "-json", f"{COMPOSE_MODULE}@{COMPOSE_VERSION}"], env=env,
                              capture_output=True, text=True, timeout=1800)
    if download.returncode != 0:
        raise ContainersUnavailable(f"go mod download {COMPOSE_MODULE}@{COMPOSE_VERSION} failed:\n"
                                    f"{(download.stdout + download.stderr)[-2000:]}")
    source = Path(json.loads(download.stdout)["Dir"])
    with tempfile.TemporaryDirectory(prefix="compose-") as work:
        tree = Path(work) / "compose"
        shutil.copytree(source, tree)
        for path in [tree, *tree.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)  # the module cache is read-only; go may write go.sum
        flags = f"-s -w -X {COMPOSE_MODULE}/internal.Version={COMPOSE_VERSION}"
        result = subprocess.run([go, "build", "-trimpath", "-ldflags", flags, "-o", str(Path(work) / "docker-compose"),
                                 "./cmd"], cwd=tree, env=env, capture_output=True, text=True, timeout=3600)
        if result.returncode != 0:
            raise ContainersUnavailable(f"go build of Compose {COMPOSE_VERSION} failed:\n"
                                        f"{(result.stdout + result.stderr)[-2000:]}")
        PLUGIN.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(work) / "docker-compose"), PLUGIN)
    PLUGIN.chmod(0o755)
    found = version()
    if not found:
        raise ContainersUnavailable(f"{PLUGIN} was built but `docker compose version` does not answer v2")
    progress(f"docker compose {found}: built in {time.monotonic() - started:.0f} s")
    return found
