"""The consent page, GET and POST /authorize/consent: where a person proves they own the profile and approves
(or denies) a client's access. Plain HTML forms (service.api.oauth.page), no script.

Against forged and framed forms: the CSRF token of each showing is in the form and, as a cookie (HttpOnly,
SameSite=Strict, this path only), in the browser that was shown it; the domain checks it against the hash on
the pending request. A POST from another site is refused: its Origin is not the issuer's, or its
Sec-Fetch-Site is not same-origin. (With `Referrer-Policy: no-referrer` browsers send `Origin: null` on the
page's own form, so "null" passes only with Sec-Fetch-Site: same-origin; a script sending neither still needs
the page's CSRF token and its cookie.) Every answer says `frame-ancestors 'none'`, `Cache-Control: no-store`,
`Referrer-Policy: no-referrer`.
"""

from __future__ import annotations

import hashlib
from functools import partial

import anyio
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route, request_response

from service.api.oauth import page
from service.api.oauth.ratelimit import Limits
from service.container import OAuthServer
from service.domain.oauth.consent import ConsentView, Locked, Redirect
from service.errors import InvalidInput, NotFound

PATH = "/authorize/consent"
BODY_LIMIT = 16 * 1024  # the form: request id, CSRF token, a token or code, the button


def _headers(form_target: str | None) -> dict[str, str]:
    form_action = "'none'" if form_target is None else f"'self' {form_target}"  # the 303 to the client is checked too
    return {
        "Content-Security-Policy": f"default-src 'none'; style-src 'self'; img-src 'self' data:; "
                                   f"form-action {form_action}; frame-ancestors 'none'; base-uri 'none'",
        "X-Frame-Options": "DENY",
        "Cache-Control": "no-store",
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
    }


def cookie_name(request_id: str) -> str:
    """One cookie per pending request, so two sign-ins in two tabs do not overwrite each other's."""
    return "memory_consent_" + hashlib.sha256(request_id.encode()).hexdigest()[:12]


def cross_site(request: Request, issuer: str) -> str | None:
    """Why a POST is taken as sent from another site, or None."""
    origin, site = request.headers.get("origin"), request.headers.get("sec-fetch-site")
    if site is not None and site != "same-origin":
        return f"Sec-Fetch-Site: {site[:40]}"
    if origin is not None and origin != issuer and not (origin == "null" and site == "same-origin"):
        return f"Origin: {origin[:100]}"
    return None


def _notice(status: int, title: str, message: str) -> HTMLResponse:
    return HTMLResponse(page.notice(title, message), status_code=status, headers=_headers(None))


def routes(server: OAuthServer, limits: Limits) -> list[Route]:
    secure = server.resources.issuer.startswith("https://")

    def shown(view: ConsentView, message: str | None = None, status: int = 200) -> HTMLResponse:
        response = HTMLResponse(page.consent(view, message), status_code=status, headers=_headers(view.redirect_origin))
        response.set_cookie(cookie_name(view.request_id), view.csrf, max_age=600, path=PATH, secure=secure,
                            httponly=True, samesite="strict")
        return response

    def too_many(request: Request) -> HTMLResponse | None:
        retry = limits.consent.retry_after(request)
        if retry is None:
            return None
        response = _notice(429, "Too many requests", limits.consent.describe("sign-in pages", retry))
        response.headers["Retry-After"] = str(retry)
        return response

    async def show(request: Request) -> Response:
        refused = too_many(request)
        if refused is not None:
            return refused
        request_id = request.query_params.get("request", "")
        try:
            view = await anyio.to_thread.run_sync(server.consent.page, request_id)
        except NotFound as exc:
            return _notice(404, "Sign-in request not found", exc.message)
        return shown(view)

    async def answer(request: Request) -> Response:
        refused = too_many(request)
        if refused is not None:
            return refused
        elsewhere = cross_site(request, server.resources.issuer)
        if elsewhere is not None:
            return _notice(403, "Refused", f"this form was sent from another site ({elsewhere}), not from "
                                           f"{server.resources.issuer}: nothing was approved")
        form = await request.form()
        request_id, csrf, action = (form.get(k) for k in ("request", "csrf", "action"))
        credential = form.get("token")
        if not isinstance(request_id, str) or not isinstance(csrf, str) or action not in ("approve", "deny"):
            return _notice(400, "Refused", "the form is incomplete: reload the sign-in page and answer it again")
        if request.cookies.get(cookie_name(request_id)) != csrf:
            return _notice(403, "Refused", "this browser was not shown this sign-in page (its cookie is missing "
                                           "or stale): open the link from the app again, in this browser")
        decide = partial(server.consent.decide, request_id, csrf, approve=action == "approve",
                         credential=credential if isinstance(credential, str) else "")
        try:
            outcome = await anyio.to_thread.run_sync(decide)
        except NotFound as exc:
            return _notice(404, "Sign-in request not found", exc.message)
        except InvalidInput as exc:
            return _notice(400, "Refused", exc.message)
        if isinstance(outcome, Redirect):
            response = RedirectResponse(outcome.url, status_code=303, headers=_headers(None))
            response.delete_cookie(cookie_name(request_id), path=PATH, secure=secure, httponly=True,
                                   samesite="strict")
            return response
        if isinstance(outcome, Locked):
            return _notice(429, "Sign-in closed", outcome.message)
        return shown(outcome.view, outcome.message, status=403)

    limited_answer = RequestBodyLimitMiddleware(request_response(answer), BODY_LIMIT)
    return [Route(PATH, endpoint=show, methods=["GET"]), Route(PATH, endpoint=limited_answer, methods=["POST"])]
