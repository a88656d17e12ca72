"""Client ID metadata documents, fetched (their rules are service.domain.oauth.documents): when /authorize names
an https client_id, its document is fetched here, checked, kept in this process for as long as its cache headers
say (within bounds; never an error or an invalid document), and its client recorded (ClientRegistry.adopt), so
that requests, grants and tokens refer to it like to a registered client.

Against server-side request forgery: the host is resolved first and every address it resolves to must be global
unicast (documents.address_problem); then the request goes to one of those very addresses, with the URL's host in
`Host` and as the TLS server name (SNI; the certificate is checked against that name), so a second DNS answer
(rebinding) cannot send it elsewhere. No proxy (trust_env off), no redirect followed (the draft forbids it), at
most documents.MAX_BYTES read, documents.FETCH_TIMEOUT for all of it. Certificates are checked against certifi's
roots, or SSL_CERT_FILE / SSL_CERT_DIR when set (httpx's convention).
"""

from __future__ import annotations

import socket
import time
from collections import OrderedDict
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from service.domain.oauth import documents
from service.domain.oauth.clients import ClientRegistry
from service.error_bodies import input_problems


class ClientDocuments:
    def __init__(self, clients: ClientRegistry, *, allow_private: bool) -> None:
        self.clients = clients
        self.allow_private = allow_private  # MEMORY_OAUTH_CLIENT_METADATA_ALLOW_PRIVATE
        self.tls = httpx.create_ssl_context()  # made once: loading the roots takes a while
        self.kept: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()  # url -> (until, registration)

    async def resolve(self, url: str) -> dict[str, Any]:
        """The registration of the client whose client_id is `url`: the one kept, or its document fetched,
        checked and recorded now. Raises OAuthRefusal saying why the client cannot be used."""
        kept = self.kept.get(url)
        if kept is not None and kept[0] > time.monotonic():
            self.kept.move_to_end(url)
            return kept[1]
        self.kept.pop(url, None)
        registration, seconds = await self._fetch(url)
        try:
            OAuthClientInformationFull.model_validate(registration)  # what the SDK's handlers will read it as
        except ValidationError as exc:
            problem = input_problems(exc.errors())[0]
            raise documents.refused(url, f"{problem.where or 'the document'}: {problem.message}") from None
        await anyio.to_thread.run_sync(self.clients.adopt, registration)
        self.kept[url] = (time.monotonic() + seconds, registration)
        while len(self.kept) > documents.MAX_CACHED:
            self.kept.popitem(last=False)
        return registration

    async def _fetch(self, url: str) -> tuple[dict[str, Any], int]:
        problem = documents.url_problem(url)
        if problem is not None:
            raise documents.refused(url, problem)
        limit = documents.FETCH_TIMEOUT
        try:
            with anyio.fail_after(limit):
                return await self._get(url, limit)
        except TimeoutError:
            raise documents.refused(url, f"no whole answer within {limit:g} s") from None

    async def _get(self, url: str, limit: float) -> tuple[dict[str, Any], int]:
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            found = await anyio.getaddrinfo(host, parts.port or 443, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise documents.refused(url, f"its host {host!r} does not resolve ({exc})") from None
        addresses = list(dict.fromkeys(str(info[4][0]).split("%", 1)[0] for info in found))
        for address in addresses:
            problem = documents.address_problem(address, allow_private=self.allow_private)
            if problem is not None:
                raise documents.refused(url, problem)
        failure = "no address"
        async with httpx.AsyncClient(verify=self.tls, trust_env=False, follow_redirects=False,
                                     timeout=limit + 1) as http:  # fail_after above ends it first
            for address in addresses:  # the checked addresses, in the resolver's order, until one connects
                request = http.build_request("GET", httpx.URL(url).copy_with(host=address),
                                             headers={"Host": parts.netloc, "Accept": "application/json"},
                                             extensions={"sni_hostname": host})
                try:
                    response = await http.send(request, stream=True)
                except httpx.ConnectError as exc:
                    failure = f"{address}: {str(exc) or type(exc).__name__}"
                    continue
                except httpx.HTTPError as exc:
                    raise documents.refused(url, f"fetching it failed ({str(exc) or type(exc).__name__})") from None
                try:
                    body = await self._body(url, response)
                finally:
                    await response.aclose()
                headers = response.headers
                return documents.registration_of(url, body), documents.cache_seconds(
                    headers.get("cache-control"), headers.get("expires"), headers.get("date"))
        raise documents.refused(url, f"no connection to {host} ({failure[:200]})")

    @staticmethod
    async def _body(url: str, response: httpx.Response) -> bytes:
        """The answer's body, at most MAX_BYTES of it: a 200 with a JSON content type, else OAuthRefusal."""
        if response.is_redirect:
            where = urlsplit(response.headers.get("location", "")).netloc or "the same host"
            raise documents.refused(url, f"the answer is a redirect ({response.status_code}, to {where[:100]}); "
                                         "a metadata document is served at its client_id URL itself, redirects "
                                         "are not followed")
        if response.status_code != 200:
            raise documents.refused(url, f"the answer is HTTP {response.status_code}, not 200")
        if not documents.is_json(response.headers.get("content-type", "")):
            raise documents.refused(url, f"the answer's content type is "
                                         f"{response.headers.get('content-type', 'missing')[:80]!r}, not JSON")
        too_big = documents.refused(url, f"the document is over {documents.MAX_BYTES} bytes")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > documents.MAX_BYTES:
            raise too_big
        body = b""
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > documents.MAX_BYTES:
                    raise too_big
        except httpx.HTTPError as exc:
            raise documents.refused(url, f"reading it failed ({str(exc) or type(exc).__name__})") from None
        return body
