"""Containers for real, on a machine without any registry: a Docker engine, the images the tests, the Dockerfile
and compose.yaml need, and Compose v2 -- each made here, idempotently, never pushed (issue 36).

    make test-containers                      # all of it: engine, images, compose, `pytest -m containers`
    make images                               # = prepare: what `docker compose up` needs where no registry is
    python -m tests.support.containers prepare    # engine (left running), images and compose only
    python -m tests.support.containers stop       # the engine, if a `prepare` of ours started it

The modules, one job each:
  engine.py   a Docker engine: the one that answers, or `dockerd` started here (and stopped by us only if so)
  images.py   the images, from a debootstrap base carrying this machine's CA certificates (HTTPS leaving the
              machine is intercepted): local/debian:bookworm and :trixie, and stand-ins tagged with the official
              names the project's files use -- python:3.11-slim (the Dockerfile's FROM), postgres:17 and
              opensearchproject/opensearch:3.5.0 (compose.yaml) and :2.19.1 (testcontainers, compose.yaml's 2.x
              run). Each carries a label with the
              digest of what it was built from; a different digest rebuilds it, an equal one is kept.
  compose.py  Compose v2 (`docker compose`): the plugin found, else built from its Go module
              (github.com/docker/compose/v2 at COMPOSE_VERSION, through the Go module proxy) into
              ~/.docker/cli-plugins
  runner.py   the command line above; `test` prepares, runs pytest with the containers' environment
              (TESTCONTAINERS_RYUK_DISABLED: Ryuk's image cannot be pulled; the tests remove their own
              containers), then stops the engine if it started it -- also on failure or Ctrl-C

The stand-ins are not the official images: they are what those images must be for the project's files to run
unchanged (the environment variables they honour, the paths, the ports). Users with a registry pull the real ones.
"""
