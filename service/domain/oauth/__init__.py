"""The OAuth 2.1 authorization server of hosted MCP clients (MEMORY_OAUTH=on), every rule once:

- policy.py: lifetimes and limits, the redirect URI rule, the resource URLs (one per profile, and /mcp);
- clients.py: registrations (RFC 7591): redirect URIs checked, secrets stored hashed, unused ones expire;
  and the clients of metadata documents, kept as their last document;
- documents.py: client ID metadata documents (a URL as client_id): which URLs and addresses are fetched,
  what a document must say, how long it is kept;
- consent.py: pending authorization requests and the consent page's decision (a profile's token or a
  consent code from `memory grant code`), CSRF, attempts;
- tokens.py: codes, access and refresh tokens (rotation, reuse detection), the access check of /mcp, RFC 7009;
- grants.py: listing and revoking grants (CLI, REST, dashboard), and the grants a static token approved.

The faces (service.api.oauth: the SDK's handlers and the consent page; service.cli.grants) only translate.
"""
