"""Pending authorization requests and the consent page's decision: a person proves they own the profile with
its static token, or a code from `memory grant code PROFILE`; a grant bound to that one profile and the
request's resource is made, with an authorization code for the client (RFC 6749 §4.1.2, RFC 9207 `iss`).

The consent page's CSRF token is made for each showing of the page and only its hash is kept on the request:
a form answers only the request, and the showing, it came from. At most CONSENT_ATTEMPTS wrong tokens or codes
per request, then it is closed.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from service import ids
from service.clock import utcnow
from service.domain.oauth import policy
from service.domain.oauth.clients import public_id, stored_id
from service.domain.oauth.documents import is_document_client_id
from service.domain.oauth.policy import Resources
from service.domain.ports.canonical import CanonicalStore, UnitOfWork
from service.domain.ports.oauth import RequestRecord
from service.domain.profiles import ProfileService
from service.errors import InvalidInput, NotFound, OAuthRefusal

CLOSED = ("this sign-in request is over (it expired after 10 minutes, or was already answered): start the "
          "connection again from the app")
USED = "was already used: each code opens one sign-in"


@dataclass(frozen=True)
class ConsentView:
    """What the consent page shows, and the CSRF token of this showing (its hash is on the request)."""

    request_id: str
    client_id: str
    client_name: str | None  # self-declared at registration
    redirect_uri: str
    profile: str | None  # None: the request is for {issuer}/mcp, the profile is the one the token opens
    resource: str
    attempts_left: int
    csrf: str

    @property
    def client_host(self) -> str | None:
        """The host of a metadata-document client's client_id (its document was fetched from there: what the
        person can trust, unlike the name it gives itself); None for a client registered at /register."""
        return urlsplit(self.client_id).netloc if is_document_client_id(self.client_id) else None

    @property
    def redirect_host(self) -> str:
        return urlsplit(self.redirect_uri).netloc

    @property
    def redirect_origin(self) -> str:
        parts = urlsplit(self.redirect_uri)
        return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class Redirect:
    """Back to the client: with a code, or with an error (access_denied)."""

    url: str


@dataclass(frozen=True)
class Retry:
    """The token or code did not open the profile: the page again, with a new CSRF token."""

    view: ConsentView
    message: str


@dataclass(frozen=True)
class Locked:
    message: str


def with_params(uri: str, **params: str | None) -> str:
    """`uri` with these query parameters added to the ones it has (RFC 6749 §3.1.2: keep the registered query)."""
    parts = urlsplit(uri)
    query = parse_qsl(parts.query, keep_blank_values=True) + [(k, v) for k, v in params.items() if v is not None]
    return urlunsplit(parts._replace(query=urlencode(query)))


class ConsentService:
    def __init__(self, store: CanonicalStore, profiles: ProfileService, resources: Resources) -> None:
        self.store = store
        self.profiles = profiles
        self.resources = resources

    def open_request(self, client_id: str, *, redirect_uri: str, redirect_explicit: bool, state: str | None,
                     scopes: list[str], code_challenge: str, resource: str | None) -> str:
        """Record what /authorize was asked (client, redirect URI and scopes already checked against the
        registration) and return the request's id, the consent page's address."""
        if not resource:
            raise OAuthRefusal("invalid_target", f"no resource: send resource={self.resources.of('PROFILE')} "
                                                 "(the MCP server's URL, RFC 8707)")
        canonical = self.resources.canonical(resource)
        if canonical is None:
            raise OAuthRefusal("invalid_target", f"resource {resource[:200]!r} is not an MCP endpoint of this "
                                                 f"service: expected {self.resources.of('PROFILE')} or "
                                                 f"{self.resources.root}")
        if not policy.PKCE_CHALLENGE.fullmatch(code_challenge):
            raise OAuthRefusal("invalid_request", "code_challenge must be the base64url SHA-256 of the code "
                                                  "verifier: 43 characters (code_challenge_method S256)")
        if state is not None and len(state) > policy.MAX_STATE:
            raise OAuthRefusal("invalid_request", f"state over {policy.MAX_STATE} characters")
        now = utcnow()
        with self.store.unit_of_work() as uow:
            client = uow.oauth.client(stored_id(client_id))
            assert client is not None and client.id is not None  # the SDK's handler found it
            request = uow.oauth.new_request(
                request_id=ids.new_request_id(), client_id=client.id, resource=canonical, redirect_uri=redirect_uri,
                redirect_explicit=redirect_explicit, state=state, scopes=scopes, code_challenge=code_challenge,
                attempts=0, created_at=now, expires_at=now + policy.REQUEST_LIFETIME)
            return request.request_id

    def _open(self, uow: UnitOfWork, request_id: str) -> RequestRecord:
        request = uow.oauth.request(request_id, for_update=True) if len(request_id) <= 40 else None
        if request is None or request.closed_at is not None or request.expires_at <= utcnow():
            raise NotFound(CLOSED, param="request")
        return request

    def _view(self, uow: UnitOfWork, request: RequestRecord) -> ConsentView:
        """The page of this request, with a new CSRF token (its hash replaces the one before)."""
        client = uow.oauth.client_by_pk(request.client_id)
        assert client is not None
        csrf = secrets.token_urlsafe(32)
        request.csrf_hash = ids.hash_token(csrf)
        uow.oauth.save(request)
        return ConsentView(request.request_id, public_id(client), client.registration.get("client_name"),
                           request.redirect_uri, self.resources.profile_of(request.resource) or None,
                           request.resource, policy.CONSENT_ATTEMPTS - request.attempts, csrf)

    def page(self, request_id: str) -> ConsentView:
        with self.store.unit_of_work() as uow:
            return self._view(uow, self._open(uow, request_id))

    def decide(self, request_id: str, csrf: str, *, approve: bool, credential: str) -> Redirect | Retry | Locked:
        """The form's answer. Raises NotFound when the request is over, InvalidInput when the CSRF token is not
        the one of the page last shown for it."""
        with self.store.unit_of_work() as uow:
            request = self._open(uow, request_id)
            if request.csrf_hash is None or not ids.same_hash(request.csrf_hash, ids.hash_token(csrf)):
                raise InvalidInput("the form does not belong to this sign-in page (CSRF check): reload the page "
                                   "and try again", param="csrf")
            now = utcnow()
            if not approve:
                request.closed_at, request.outcome = now, "denied"
                uow.oauth.save(request)
                return Redirect(self._back(request, error="access_denied",
                                           error_description="the profile's owner denied access"))
            found = self._credential(uow, request, credential.strip())
            if isinstance(found, str):
                request.attempts += 1
                if request.attempts >= policy.CONSENT_ATTEMPTS:
                    request.closed_at, request.outcome = now, "locked"
                    uow.oauth.save(request)
                    return Locked(f"{policy.CONSENT_ATTEMPTS} wrong tokens or codes: this sign-in request is closed; "
                                  "start the connection again from the app")
                return Retry(self._view(uow, request), found)
            profile_id, token_id = found
            grant = uow.oauth.new_grant(grant_id=ids.new_grant_id(), profile_id=profile_id,
                                        client_id=request.client_id, resource=request.resource,
                                        scopes=list(request.scopes), approved_token_id=token_id, created_at=now)
            code = ids.new_secret(ids.AUTH_CODE_PREFIX)
            assert grant.id is not None
            uow.oauth.new_code(code_hash=ids.hash_token(code), grant_id=grant.id,
                               code_challenge=request.code_challenge, redirect_uri=request.redirect_uri,
                               redirect_explicit=request.redirect_explicit, created_at=now,
                               expires_at=now + policy.CODE_LIFETIME)
            request.closed_at, request.outcome = now, "approved"
            client = uow.oauth.client_by_pk(request.client_id)
            assert client is not None
            if client.first_grant_at is None:
                client.first_grant_at = now
            uow.oauth.save(request, client)
            return Redirect(self._back(request, code=code))

    def _credential(self, uow: UnitOfWork, request: RequestRecord, credential: str) -> tuple[int, str | None] | str:
        """(profile id, static token id or None) when the credential opens the request's profile (any profile
        for a request to {issuer}/mcp), else why not, as the page says it; a consent code is used up here.
        Consent codes are kept once used or expired, so a spent one is told apart from one never issued."""
        wanted = self.resources.profile_of(request.resource) or None
        if credential.startswith(ids.CONSENT_CODE_PREFIX):
            code = uow.oauth.consent_code(ids.hash_token(credential))
            if code is None or code.id is None:
                return self._wrong(wanted)
            if code.used_at is not None:
                return self._spent(wanted, USED)
            if code.expires_at <= utcnow():
                minutes = policy.CONSENT_CODE_LIFETIME.seconds // 60
                return self._spent(wanted, f"has expired: a code is valid {minutes} minutes")
            owner = uow.profiles.by_id(code.profile_id)
            if owner is None or (wanted is not None and owner.name != wanted):
                return self._wrong(wanted)
            if not uow.oauth.use_consent_code(code.id, utcnow()):  # used meanwhile by another sign-in
                return self._spent(wanted, USED)
            return code.profile_id, None
        if not credential or len(credential) > 512 or not credential.isascii():
            return self._wrong(wanted)
        found = self.profiles.check_token(credential, wanted)
        return self._wrong(wanted) if found is None else (found[0].id, found[1])

    def _back(self, request: RequestRecord, **params: str) -> str:
        return with_params(request.redirect_uri, **params, state=request.state, iss=self.resources.issuer)

    @staticmethod
    def _wrong(profile: str | None) -> str:
        if profile is None:
            return "that is neither a token of a profile nor a code from memory grant code"
        return f"that is neither a token of profile {profile} nor a code from memory grant code {profile}"

    @staticmethod
    def _spent(profile: str | None, why: str) -> str:
        return f"that code from memory grant code {why}; run memory grant code {profile or 'PROFILE'} for a new one"
