"""Agent memory service: curated facts for software agents over MCP, reviewed over REST."""

import os

__version__ = "0.1.0"

# numpy's OpenBLAS keeps its worker threads spinning for 2^28 cycles (~0.1 s) after every matrix product; the
# service makes one per search and write (the vector scan), so on a small box a core spun between calls, taking
# it from the model and the event loop (bench/write_ab.py --cut similar, 10k facts: 19-21 ms of CPU a write
# against 12-13 with this, the write 0.35 ms faster). 2^4 cycles: idle threads sleep at once. OpenBLAS reads it
# when it loads, so it is set here, before anything of the service imports numpy; a value already set is kept.
OPENBLAS_TIMEOUT_GIVEN = "OPENBLAS_THREAD_TIMEOUT" in os.environ  # by whoever started the process
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
