"""MCP face: the five tools and the /mcp/{profile} endpoint (host check, bearer auth, the SDK's transport).
Its refusals are the HTTP answers of service.web.errors; tool errors are one line (service.error_bodies)."""
