"""The OAuth 2.1 face (MEMORY_OAUTH=on): discovery documents, the SDK's /authorize, /token and /register
handlers with what they lack filled in, /revoke, the consent page, and the fetch of client ID metadata
documents. The rules are in service.domain.oauth.
Protocol endpoints, not REST: their documentation is the authorization server metadata (RFC 8414), so they
are not in /openapi.json."""

from __future__ import annotations

from fastapi import FastAPI

from service.api.oauth import consent, endpoints, metadata
from service.api.oauth.client_documents import ClientDocuments
from service.api.oauth.ratelimit import Limits
from service.container import Services


def mount(app: FastAPI, services: Services) -> None:
    """Add the OAuth routes when MEMORY_OAUTH=on; otherwise nothing (their paths stay 404s)."""
    if services.oauth is None:
        return
    limits = Limits()
    documents = ClientDocuments(services.oauth.clients,
                                allow_private=services.settings.oauth_client_metadata_allow_private)
    for route in (*metadata.routes(services.oauth.resources), *endpoints.routes(services.oauth, limits, documents),
                  *consent.routes(services.oauth, limits)):
        app.router.routes.append(route)
