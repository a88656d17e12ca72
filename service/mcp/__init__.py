"""MCP face: the five tools and the /mcp/{profile} endpoint (host check, bearer auth, the SDK's transport)."""
