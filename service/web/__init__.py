"""What the two HTTP faces share: the REST API (service.api) and the MCP endpoint (service.mcp) read bearer
credentials, check the Host header and render errors the same way, from here. Neither face imports the
other's modules for it; service.api.app, which serves both, sits above them."""
