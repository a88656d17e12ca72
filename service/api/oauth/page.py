"""The consent page as HTML: plain, in the dashboard's look (/ui/app.css and /ui/consent.css), no script, so it
works without JavaScript. Everything shown that a client chose (its name, redirect URI) is escaped."""

from __future__ import annotations

from html import escape

from service.domain.oauth.consent import ConsentView

HEAD = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>{title} · Memory</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/ui/app.css">
  <link rel="stylesheet" href="/ui/consent.css">
</head>
<body>
  <header class="topbar">
    <div class="brand"><span class="logo" aria-hidden="true">◆</span><span>Memory</span></div>
  </header>
  <main id="main" class="consent">
"""
TAIL = """  </main>
</body>
</html>
"""


def consent(view: ConsentView, message: str | None = None) -> str:
    """The page asking the profile's owner to approve (or deny) the client's access."""
    name = escape(view.client_name) if view.client_name else "<em>an app that gave no name</em>"
    profile = f"the profile <strong data-testid=\"profile\">{escape(view.profile)}</strong>" if view.profile else \
        "<strong data-testid=\"profile\">a profile</strong> — the one whose token or code you enter below —"
    label = f"Token of profile {escape(view.profile)}" if view.profile else "Token of a profile"
    code = f"memory grant code {escape(view.profile)}" if view.profile else "memory grant code PROFILE"
    error = "" if message is None else (
        f'    <p class="banner" role="alert" data-testid="consent-error">{escape(message)} '
        f"({view.attempts_left} attempt{'s' if view.attempts_left != 1 else ''} left)</p>\n")
    head = HEAD.format(title="Connect an app") + error
    return head + f"""    <section class="card login" aria-labelledby="consent-title">
      <h1 id="consent-title">Connect an app to your memory</h1>
      <p>{_who(view, name)} asks to use {profile} of this memory service: search, write, update and forget
        its facts with the five memory tools, until you revoke it.</p>
      <dl class="facts-list">
{_client_host(view)}        <dt>After you answer, your browser goes to</dt>
        <dd><strong class="long-words" data-testid="redirect-host">{escape(view.redirect_host)}</strong></dd>
        <dt>Resource</dt>
        <dd class="mono long-words" data-testid="resource">{escape(view.resource)}</dd>
      </dl>
      <p class="hint">Approve only if you started this connection yourself and you expect to go to
        <strong>{escape(view.redirect_host)}</strong>.</p>
      <form method="post" action="/authorize/consent" autocomplete="off" data-testid="consent-form">
        <input type="hidden" name="request" value="{escape(view.request_id)}">
        <input type="hidden" name="csrf" value="{escape(view.csrf)}">
        <label for="consent-token">{label}</label>
        <input id="consent-token" name="token" type="password" autocapitalize="off" spellcheck="false"
               data-testid="consent-token">
        <p class="hint">Or a single-use code from <code>{code}</code> (valid 10 minutes), so the token
          itself is never typed into a browser.</p>
        <div class="actions">
          <button type="submit" name="action" value="approve" class="btn" data-testid="approve">Approve</button>
          <button type="submit" name="action" value="deny" class="btn btn-quiet" formnovalidate
                  data-testid="deny">Deny</button>
        </div>
      </form>
    </section>
""" + TAIL


def _who(view: ConsentView, name: str) -> str:
    """The client as the person can check it: a metadata-document client by the host its client_id (the URL its
    document was fetched from) names, then its self-declared name; a registered client by its name alone."""
    said = f'<span data-testid="client-name">{name}</span>'
    if view.client_host is None:
        return f'{said} <span class="muted">(the name it gave itself; not verified)</span>'
    return (f'The app at <strong class="long-words">{escape(view.client_host)}</strong>, which calls itself {said} '
            f'<span class="muted">(a name not verified)</span>,')


def _client_host(view: ConsentView) -> str:
    if view.client_host is None:
        return ""
    return f"""        <dt>The app's client ID (its address)</dt>
        <dd><strong class="long-words" data-testid="client-host">{escape(view.client_host)}</strong>
          <span class="mono long-words muted" data-testid="client-id">{escape(view.client_id)}</span></dd>
"""


def notice(title: str, message: str) -> str:
    """A page that ends the sign-in here (request over, form refused, too many attempts)."""
    return HEAD.format(title=escape(title)) + f"""    <section class="card login" aria-labelledby="notice-title">
      <h1 id="notice-title">{escape(title)}</h1>
      <p data-testid="notice">{escape(message)}</p>
    </section>
""" + TAIL
