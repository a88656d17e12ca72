"""The OAuth rules that need no store: which redirect URIs register, and which resource URLs are the service's."""

from __future__ import annotations

import pytest

from service.domain.oauth.policy import Resources, redirect_uri_problem


@pytest.mark.parametrize("uri", [
    "https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback",
    "https://chatgpt.com/connector/oauth/c_123", "https://chatgpt.com/connector_platform_oauth_redirect",
    "http://127.0.0.1:33418/callback", "http://localhost:8765/cb", "http://[::1]:9/cb", "https://x.example/cb?k=v",
])
def test_redirect_uris_that_register(uri: str) -> None:
    assert redirect_uri_problem(uri) is None


@pytest.mark.parametrize("uri", [
    "http://claude.ai/api/mcp/auth_callback", "https://x.example/cb#f", "https://u:p@x.example/cb",
    "javascript:alert(1)", "myapp://cb", "https:///nohost", "http://127.0.0.1.evil.example/cb",
    "https://x.example/" + "a" * 2000,
])
def test_redirect_uris_that_do_not(uri: str) -> None:
    assert redirect_uri_problem(uri) is not None


def test_resource_urls() -> None:
    resources = Resources("https://memory.example.com")
    assert resources.of("work") == "https://memory.example.com/mcp/work"
    assert resources.of(None) == "https://memory.example.com/mcp"
    assert resources.metadata_url("work") == "https://memory.example.com/.well-known/oauth-protected-resource/mcp/work"
    assert resources.profile_of("https://memory.example.com/mcp/work") == "work"
    assert resources.profile_of("HTTPS://Memory.Example.com/mcp/work/") == "work"
    assert resources.canonical("https://memory.example.com/mcp/") == "https://memory.example.com/mcp"
    for other in ("https://memory.example.com/mcp/Work", "https://memory.example.com/mcp/a/b",
                  "https://memory.example.com:8443/mcp/work", "http://memory.example.com/mcp/work",
                  "https://memory.example.com/mcp/work?x=1", "https://memory.example.com/api/work",
                  "https://evil.example/mcp/work", "https://memory.example.com/mcpx", ""):
        assert resources.profile_of(other) is None, other
