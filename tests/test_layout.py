"""The layout rules, read from the source with `ast`, so that they survive the next change.

Dependencies point one way (docs/architecture.md, "Layers" and "Layout"):

    faces (api, mcp, cli) -> container (wiring) -> application (domain) -> ports <- adapters (store, search,
    embedding), with pure rules and types at the bottom, importable by every layer.

No adapter imports another: the search adapters reach the canonical store only through the ports of
service.domain.ports.sources, wired by the container; no adapter reaches up into the application, the wiring
or a face. Among the faces, service.web (what both HTTP faces share) sits below the MCP endpoint, which sits
below the REST API (whose app serves both). No import runs back up, and no modules import each other in a
circle. Every import is counted, at module level or inside a function, under TYPE_CHECKING or not.

And no module is a monolith: a .py file has at most 400 lines, a dashboard script at most 500.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PY_MAX_LINES = 400
JS_MAX_LINES = 500

# Pure rules and types: no I/O, no knowledge of any layer above. Every layer may import them.
PURE = {
    "service", "service.addresses", "service.errors", "service.error_bodies", "service.clock", "service.ids", "service.config",
    "service.opensearch_settings",
    "service.logs", "service.contract", "service.domain.models", "service.domain.validation", "service.domain.reports",
    "service.domain.lexical", "service.search.readable", "service.search.fusion", "service.search.mode",
    "service.domain.gaps",  # the gap report's grouping rule (the store's reader builds its MissedQuery)
    "service.domain.late",  # token vectors and late interaction (value types and one function)
    "service.domain.wording",  # what the ranking stage reads of a fact's words (the embedded index keeps it)
    "service.domain.instants",  # reading an instant a caller typed (as_of, a window's ends)
    "service.domain.window",  # a search's or listing's time window: its rule, which both backends and the store apply
}
# The ports (the package service.domain.ports: search backend, embedder, canonical store and its records), and
# the policy of calling the embedder port (embed_gate: both the domain and the embedded backend ask it when the
# embedder may be called).
PORTS = {"service.domain.embed_gate"}

# (layer, module prefix), most specific first: the first prefix a module starts with gives its layer.
PREFIXES = [
    ("wiring", "service.container"),
    ("face", "service.api"), ("face", "service.mcp"), ("face", "service.cli"), ("face", "service.__main__"),
    ("face", "service.web"), ("face", "service.ui"),
    ("store", "service.store"), ("search", "service.search"), ("embedding", "service.embedding"),
    ("ports", "service.domain.ports"), ("application", "service.domain"),
]
ALLOWED = {
    "pure": {"pure"},
    "ports": {"ports", "pure"},
    "application": {"application", "ports", "pure"},
    "store": {"store", "ports", "pure"},
    "search": {"search", "ports", "pure"},
    "embedding": {"embedding", "ports", "pure"},
    "wiring": {"wiring", "application", "store", "search", "embedding", "ports", "pure"},
    "face": {"face", "wiring", "application", "ports", "pure"},
}
# The faces' own order, lowest first: a face imports only faces at or below it.
FACE_ORDER = ["service.web", "service.mcp", "service.api", "service.cli", "service.__main__"]


def layer(module: str) -> str:
    if module in PURE:
        return "pure"
    if module in PORTS:
        return "ports"
    for name, prefix in PREFIXES:
        if module == prefix or module.startswith(prefix + "."):
            return name
    raise AssertionError(f"{module}: no layer; add it to tests/test_layout.py")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """The service modules a file imports (`from service.x import y` counts y when it is a module)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names}
            found.update(name for name in submodules if is_module(name))
            if not all(is_module(name) for name in submodules):  # names defined in the module itself
                found.add(node.module)
    return {name for name in found if name.split(".")[0] == "service" and is_module(name)}


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def sources(*folders: str, suffix: str = ".py") -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob(f"*{suffix}")
                  if "vendor" not in p.parts and "node_modules" not in p.parts and ".venv" not in p.parts)


def wrong_arrows() -> set[tuple[str, str]]:
    arrows = set()
    for path in sources("service"):
        here = module_name(path)
        for target in imports(path):
            if layer(target) not in ALLOWED[layer(here)] and target != here:
                arrows.add((here, target))
    return arrows


def test_dependencies_point_one_way() -> None:
    wrong = sorted(wrong_arrows())
    assert not wrong, "imports against the layering (docs/architecture.md, 'Layout'):\n" + "\n".join(
        f"  {a} -> {b}" for a, b in wrong)


def face_rank(module: str) -> int | None:
    for rank, prefix in enumerate(FACE_ORDER):
        if module == prefix or module.startswith(prefix + "."):
            return rank
    return None


def test_no_import_runs_back_up_among_the_faces() -> None:
    """service.mcp never imports service.api (the app that serves both sits above it); both share service.web."""
    wrong = []
    for path in sources("service"):
        here = module_name(path)
        for target in imports(path):
            low, high = face_rank(target), face_rank(here)
            if low is not None and high is not None and low > high:
                wrong.append(f"{here} -> {target}")
    assert not wrong, "imports running back up:\n  " + "\n  ".join(sorted(wrong))


def test_no_search_adapter_imports_the_store() -> None:
    wrong = sorted(f"{module_name(p)} -> {t}" for p in sources("service/search") for t in imports(p)
                   if t == "service.store" or t.startswith("service.store."))
    assert not wrong, "search adapters read the store through service.domain.ports.sources:\n  " + "\n  ".join(wrong)


def import_circles() -> list[list[str]]:
    """Strongly connected groups of two or more service modules (Tarjan), each sorted."""
    graph = {module_name(p): {t for t in imports(p) if t != module_name(p)} for p in sources("service")}
    for module in graph:  # `import service.x.y` makes service.x.y, not its packages, the target
        graph[module] = {t for t in graph[module] if t in graph}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_modules_import_each_other_in_a_circle() -> None:
    circles = import_circles()
    assert not circles, "import circles:\n  " + "\n  ".join(" <-> ".join(c) for c in circles)


def test_no_layer_imports_the_wiring_but_the_faces() -> None:
    """container.py is the one place that picks backends: only the faces (and bench/) call it."""
    for path in sources("service"):
        here = module_name(path)
        if layer(here) not in ("face", "wiring"):
            assert "service.container" not in imports(path), here


def test_only_the_opensearch_adapter_imports_opensearchpy() -> None:
    for path in sources("service"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        if any(name.split(".")[0] == "opensearchpy" for name in names):
            assert module_name(path).startswith("service.search.opensearch"), path


def test_bench_does_not_import_the_tests() -> None:
    for path in sources("bench"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(name.split(".")[0] == "tests" for name in names), path


@pytest.mark.parametrize("folder", ["service", "bench", "tests"])
def test_no_python_module_passes_400_lines(folder: str) -> None:
    long = {str(p.relative_to(ROOT)): n for p in sources(folder)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > PY_MAX_LINES}
    assert not long, f"split these modules (at most {PY_MAX_LINES} lines): {long}"


def test_no_dashboard_script_passes_500_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in sources("service/ui", suffix=".js")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > JS_MAX_LINES}
    assert not long, f"split these scripts (at most {JS_MAX_LINES} lines): {long}"


def test_every_service_module_has_a_layer() -> None:
    for path in sources("service"):
        layer(module_name(path))


def test_every_service_import_names_a_module_or_a_name_in_one() -> None:
    """`from service.x import y` where service.x does not exist (a module moved) fails here, not in a face."""
    for path in sources("service", "tests", "bench"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("service"):
                assert is_module(node.module or ""), f"{path.relative_to(ROOT)}: no module {node.module}"


def test_only_the_stores_change_owner_records_changes() -> None:
    """Issue 29: a change's number and its outbox row are written by service/store/changes.py alone; the domain
    never sets a change number itself."""
    owner = ROOT / "service" / "store" / "changes.py"
    outbox_insert = re.compile(r"(?<!class )OutboxRow\(|insert\(\s*OutboxRow|OutboxRow\.__table__")
    sequence_bump = re.compile(r"fact_seq\s*\+\s*1")
    wrong = []
    for path in sources("service"):
        if path == owner or "migrations" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if outbox_insert.search(text) or sequence_bump.search(text):
            wrong.append(str(path.relative_to(ROOT)))
        if module_name(path).startswith("service.domain") and re.search(r"change_seq\s*=", text):
            wrong.append(f"{path.relative_to(ROOT)} sets a change number")
    assert not wrong, "changes recorded outside service/store/changes.py:\n  " + "\n  ".join(wrong)


def test_the_domain_never_says_what_changed() -> None:
    """Issue 56: the store owns "a fact changed" (ports.canonical, `changing`; changes.Tracked): no domain module
    records a change, tells the search backend after a commit, or sets a fact's status outside the transitions
    of service/domain/lifecycle.py."""
    telling = re.compile(r"\.changes\.|\.changed\(|\.written\(|on_changed")
    lifecycle = ROOT / "service" / "domain" / "lifecycle.py"
    wrong = []
    for path in sources("service"):
        if not module_name(path).startswith("service.domain") or "ports" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        for number, line in enumerate(text.splitlines(), 1):
            if telling.search(line.split("#", 1)[0]):
                wrong.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
        if path == lifecycle:
            continue
        for node in ast.walk(ast.parse(text)):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                for item in (target.elts if isinstance(target, ast.Tuple) else [target]):
                    if isinstance(item, ast.Attribute) and item.attr in ("status", "retired_at", "superseded_by"):
                        wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: sets .{item.attr}")
    assert not wrong, "the domain records a change itself:\n  " + "\n  ".join(wrong)


def test_fact_statuses_are_declared_once() -> None:
    """service.contract.FactStatus is the one declaration (STATUSES, the schemas and the dashboard derive from
    it); no other module spells a status out to compare, assign or filter on it."""
    spelled = re.compile(r'(==|!=)\s*"(active|retired|superseded)"|"status"\s*:\s*"(active|retired|superseded)"'
                         r'|status\s*=\s*"(active|retired|superseded)"|"active",\s*"retired",\s*"superseded"')
    owner = ROOT / "service" / "contract.py"
    wrong = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sources("service")
             if p != owner and "migrations" not in p.parts
             for m in spelled.finditer(p.read_text(encoding="utf-8"))]
    assert not wrong, "statuses spelled out (use service.contract.FactStatus):\n  " + "\n  ".join(wrong)


FACT_FIELDS = {"uid", "title", "text", "kind", "tags", "status", "created_at", "updated_at", "retired_at",
               "supersedes", "superseded_by"}


def test_a_fact_is_declared_once() -> None:
    """Issue 29: service.domain.models.Fact is the domain's value and the schema of every face (MCP output
    schemas, REST bodies); no face or domain module declares the fact's fields again (a model that adds to a
    fact subclasses it). The store's rows and their record protocol are storage, not a declaration of the value."""
    owner = ROOT / "service" / "domain" / "models.py"
    wrong = []
    for path in sources("service"):
        layer_of = layer(module_name(path))
        if path == owner or layer_of not in ("face", "application") or module_name(path).startswith(
                "service.domain.ports"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                declared = {s.target.id for s in node.body if isinstance(s, ast.AnnAssign)
                            and isinstance(s.target, ast.Name)}
                if len(declared & FACT_FIELDS) >= 6:
                    wrong.append(f"{path.relative_to(ROOT)}: class {node.name}")
    assert not wrong, "a fact declared again (use service.domain.models.Fact):\n  " + "\n  ".join(wrong)


def test_routes_return_the_models_they_declare() -> None:
    """Issue 29: every REST route declares the model it returns (its annotation: FastAPI checks the answer
    against it and documents it); none builds and returns a plain dict."""
    wrong = []
    for path in sources("service/api/routes"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            routed = any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in
                         ("get", "post", "put", "patch", "delete") for d in node.decorator_list)
            returns = ast.unparse(node.returns) if node.returns is not None else ""
            if routed and (not returns or returns.startswith("dict")):
                wrong.append(f"{path.relative_to(ROOT)}: {node.name} -> {returns or '?'}")
    assert not wrong, "routes without a declared model:\n  " + "\n  ".join(wrong)


def test_input_errors_are_read_in_one_place() -> None:
    """Issue 29: pydantic's errors (REST parameters, tool arguments, JSON-RPC messages, settings) are read by
    service.error_bodies.input_problems alone, so every face words a refused argument the same way."""
    wrong = []
    for path in sources("service"):
        if path.name == "error_bodies.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        through = {id(n) for call in ast.walk(tree) if isinstance(call, ast.Call)
                   and getattr(call.func, "id", None) == "input_problems" for arg in call.args for n in ast.walk(arg)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "errors"
                    and not node.args and id(node) not in through):
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not wrong, "pydantic errors read outside error_bodies.input_problems:\n  " + "\n  ".join(wrong)


def test_backend_capabilities_are_read_at_start_up() -> None:
    """Issue 29: what a search backend can do beyond the port is its typed Capabilities, read once by
    service.container; no module probes a backend with isinstance/getattr/hasattr."""
    probe = re.compile(r"(isinstance|getattr|hasattr)\([^)]*backend")
    wrong = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sources("service")
             for m in probe.finditer(p.read_text(encoding="utf-8"))]
    assert not wrong, "a backend probed at run time (declare it in Capabilities):\n  " + "\n  ".join(wrong)
