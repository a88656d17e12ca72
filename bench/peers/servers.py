"""The servers the side-by-side measures: how each one is started (argv and environment), which tool it is
written and searched with, and how its answer is read (harness.py runs them)."""
import json
import os
import re
import shlex
from pathlib import Path


# ----------------------------------------------------------------------------- peers
class Peer:
    name = "?"
    transport = "?"

    def __init__(self, a):
        self.a = a

    def server_cmd(self, run_dir, port):  # (argv, env), or None for a server already running at --port
        return None

    def url(self, port):
        return f"http://127.0.0.1:{port}/mcp"

    def headers(self):
        return {}

    def write_call(self, f):
        raise NotImplementedError

    def search_call(self, q, limit):
        raise NotImplementedError

    def write_ok(self, r):
        return not r.is_error

    def parse_search(self, r):
        """-> (returned, matched or None, text of the payload used to find the target)."""
        raise NotImplementedError


def text_of(r):
    """The text parts of a tool result, joined."""
    return "\n".join(getattr(c, "text", "") or "" for c in (r.content or []))


class MMS(Peer):
    name, transport = "mcp-memory-service", "streamable-http (memory server --streamable-http)"

    def server_cmd(self, run_dir, port):
        b = Path(self.a.base)
        env = dict(os.environ)
        env.update({
            # ONNX all-MiniLM-L6-v2 is looked up under $HOME/.cache/mcp_memory/onnx_models
            "HOME": str(b / "models" / "mms-home"),
            "MCP_MEMORY_BASE_DIR": str(run_dir / "data"),
            "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
            "MCP_MEMORY_ONNX_ALLOW_DOWNLOAD": "0",
            "MCP_MDNS_ENABLED": "false",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "LOG_LEVEL": "WARNING",
        })
        argv = [str(b / "venv-mms" / "bin" / "memory"), "server", "--streamable-http",
                "--sse-host", "127.0.0.1", "--sse-port", str(port)]
        return argv, env

    # its memory_type must come from its ontology; nearest types for our four kinds
    TYPES = {"preference": "preference_signal", "decision": "decision", "project": "planning",
             "reference": "reference"}

    def write_call(self, f):
        return "memory_store", {"content": f["text"],
                                "metadata": {"tags": ",".join(f["tags"] + [f["kind"]]),
                                             "type": self.TYPES.get(f["kind"], "note")}}

    def write_ok(self, r):
        return not r.is_error and "rror" not in text_of(r)[:40]

    def search_call(self, q, limit):
        return "memory_search", {"query": q, "mode": self.a.search_mode or "hybrid", "limit": limit}

    def parse_search(self, r):
        t = text_of(r)
        m = re.search(r"Found (\d+) memories", t)
        n = int(m.group(1)) if m else (0 if "No memories found" in t else -1)
        return n, None, t


class Qdrant(Peer):
    name, transport = "mcp-server-qdrant (local mode)", "streamable-http (mcp-server-qdrant --transport streamable-http)"

    def server_cmd(self, run_dir, port):
        b = Path(self.a.base)
        env = dict(os.environ)
        env.update({
            "QDRANT_LOCAL_PATH": str(run_dir / "data"),  # embedded qdrant-client, no Qdrant server
            "COLLECTION_NAME": "bench",
            "EMBEDDING_MODEL": "sentence-transformers/all-MiniLM-L6-v2",  # its default
            "FASTEMBED_CACHE_PATH": str(b / "models" / "fastembed"),
            "HF_HUB_OFFLINE": "1",
            "FASTMCP_SERVER_HOST": "127.0.0.1", "FASTMCP_SERVER_PORT": str(port),
        })
        return [str(b / "venv-qdrant" / "bin" / "mcp-server-qdrant"), "--transport", "streamable-http"], env

    def write_call(self, f):
        return "qdrant-store", {"information": f["text"],
                                "metadata": {"title": f["title"], "kind": f["kind"], "tags": f["tags"]}}

    def search_call(self, q, limit):  # limit is the server's QDRANT_SEARCH_LIMIT (default 10)
        return "qdrant-find", {"query": q}

    def parse_search(self, r):
        t = text_of(r)
        return t.count("<entry>"), None, t


class Product(Peer):
    name, transport = "product", "streamable-http + bearer"

    def server_cmd(self, run_dir, port):
        if not self.a.server_cmd:
            return None
        argv = shlex.split(self.a.server_cmd.format(run_dir=run_dir, port=port, base=self.a.base))
        return argv, dict(os.environ)

    def url(self, port):
        return self.a.url.format(port=port)

    def headers(self):
        return {"Authorization": f"Bearer {self.a.token}"} if self.a.token else {}

    def write_call(self, f):
        return "memory_write", {"title": f["title"], "text": f["text"], "kind": f["kind"],
                                "tags": f["tags"]}

    def search_call(self, q, limit):
        return "memory_search", {"query": q, "limit": limit}

    def parse_search(self, r):
        sc = r.structured_content or {}
        if "result" in sc and isinstance(sc["result"], dict):
            sc = sc["result"]
        facts = sc.get("facts", [])
        return sc.get("returned_count", len(facts)), sc.get("matched_count"), json.dumps(facts)


PEERS = {"mms": MMS, "qdrant": Qdrant, "product": Product}
