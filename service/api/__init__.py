"""REST face: the review API (routes/), its error table and handler, host and size checks, the dashboard mount.
HTTP lives here and in mcp/ only; routes parse input, call one service and shape the answer."""
