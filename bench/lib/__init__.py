"""What the benchmarks share: the synthetic corpus (corpus), fast seeding of a store (seeding), the service
run in a process or a thread (server), MCP clients (mcp) and measurement helpers (measure). It imports the
service, never the tests."""

import service  # noqa: F401 - before numpy: a service run in a bench's process sets numpy's BLAS threads as served
