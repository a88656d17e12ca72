"""Agent memory service: curated facts for software agents over MCP, reviewed over REST."""

__version__ = "0.1.0"
