"""What the benchmarks share: the synthetic corpus (corpus), fast seeding of a store (seeding), the service
run in a process or a thread (server), MCP clients (mcp) and measurement helpers (measure). It imports the
service, never the tests."""
