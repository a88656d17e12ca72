"""The documentation's shape (issue 40): a README a newcomer reads in minutes, one page per audience under docs/,
links that resolve, and every setting documented once.

- README.md is at most 400 lines, and its first 80 hold the two commands: `make run` (set up and run the
  embedded default) and `make test` (set up and run the tests) — the test command .ci/run runs.
- docs/ holds agents.md, reviewers.md, operators.md, benchmarks.md and architecture.md; each starts with its
  title and then says whom it is for (a paragraph starting "**For**"); README links every page of docs/.
- Every relative link of README.md and docs/*.md resolves: the file exists and, for `#anchor`, a heading of
  that file has that anchor by GitHub's rule (lower case; every character but letters, digits, `_`, `-` and
  spaces dropped; each space a `-`; a repeated anchor gets `-1`, `-2`, ...).
- Every environment variable the settings object reads is documented in exactly one table row across
  README.md and docs/*.md. "Documented in a table row" means: a line outside code blocks that starts with `|`
  and whose first cell holds the name as a code span (`` `MEMORY_X` ``; one row may name several, as
  `` `MEMORY_BIND` / `MEMORY_PORT` ``). Names a first cell gives that no setting has fail too (a stale row).
- docs/architecture.md names every module of service/ by its file name.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from service.config import NOT_SETTINGS, Settings

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = ("agents.md", "reviewers.md", "operators.md", "benchmarks.md", "architecture.md")
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE_SPAN = re.compile(r"`+[^`]*`+")


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose_lines(path: Path) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks."""
    lines, fenced = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text (github-slugger): the rendered text, lower-cased, punctuation and
    symbols dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.replace("`", "").replace("*", "")  # code spans and emphasis: their text
    return "".join("-" if ch == " " else ch for ch in text.strip().lower() if ch in " -_" or ch.isalnum())


def anchors(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for _, line in prose_lines(path):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            base = slug(heading.group(1))
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
    return found


def test_slugs_follow_githubs_rule() -> None:
    assert slug("Scale-out deployment (PostgreSQL + OpenSearch)") == "scale-out-deployment-postgresql--opensearch"
    assert slug("claude.ai, Claude Desktop and ChatGPT (OAuth)") == "claudeai-claude-desktop-and-chatgpt-oauth"
    assert slug("The container tests (`make test-containers`)") == "the-container-tests-make-test-containers"
    assert slug("A team's cluster: TLS, credentials and the service's role") == \
        "a-teams-cluster-tls-credentials-and-the-services-role"
    assert slug("From Python (MCP SDK 2.x)") == "from-python-mcp-sdk-2x"


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400, f"README.md has {len(lines)} lines; move detail to a page of docs/"


def two_commands() -> dict[str, int]:
    """The line (1-based) of `make run` and of `make test` in README's first bash block after "## Two commands"."""
    text = README.read_text(encoding="utf-8")
    start = text.index("\n## Two commands\n")
    block = re.search(r"```bash\n(.*?)```", text[start:], flags=re.S)
    assert block is not None, "README's Two commands section has no ```bash block"
    first_line = text[:start + block.start(1)].count("\n") + 1
    commands = {}
    for offset, line in enumerate(block.group(1).splitlines()):
        command = line.split("#", 1)[0].strip()
        commands[command] = first_line + offset
    return commands


def test_the_two_commands_open_the_readme() -> None:
    commands = two_commands()
    assert set(commands) == {"make run", "make test"}, commands
    assert max(commands.values()) <= 80, f"the two commands are on README lines {commands}; keep them in the first 80"


def test_ci_runs_the_test_command_of_the_readme() -> None:
    """.ci/run runs README's test command as written (the second of the two commands)."""
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert "make test" in two_commands() and "make test" in ci


def test_docs_has_one_page_per_audience_each_saying_whom_it_is_for() -> None:
    readme = README.read_text(encoding="utf-8")
    for name in PAGES:
        page = DOCS / name
        assert page.is_file(), f"docs/{name} is missing"
        paragraphs = [p.strip() for p in page.read_text(encoding="utf-8").split("\n\n") if p.strip()]
        assert paragraphs[0].startswith("# ") and "\n" not in paragraphs[0], f"docs/{name} starts with its title"
        assert paragraphs[1].startswith("**For**"), f"docs/{name}: the paragraph after the title says whom it is for"
    for page in sorted(DOCS.glob("*.md")):
        assert f"](docs/{page.name})" in readme, f"README links no docs/{page.name}"


def test_every_relative_link_resolves() -> None:
    broken = []
    for path in markdown_files():
        for number, line in prose_lines(path):
            for target in LINK.findall(CODE_SPAN.sub("", line)):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, ...
                    continue
                file, _, anchor = target.partition("#")
                linked = (path.parent / file).resolve() if file else path
                where = f"{path.relative_to(ROOT)}:{number}: {target}"
                if not linked.exists():
                    broken.append(f"{where} (no such file)")
                elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
                    broken.append(f"{where} (no heading with that anchor in {linked.relative_to(ROOT)})")
    assert not broken, "links that do not resolve:\n" + "\n".join(broken)


def settings_variables() -> set[str]:
    """Every environment variable the settings object reads: its prefix and each field's name (no aliases, no
    nested names), and every MEMORY_* name written in the modules that declare and check the settings."""
    prefix = Settings.model_config.get("env_prefix")
    assert prefix == "MEMORY_" and not Settings.model_config.get("env_nested_delimiter")
    fields = Settings.model_fields
    assert all(f.alias is None and f.validation_alias is None for f in fields.values()), \
        "a setting has an alias: name its environment variable here"
    names = {f"{prefix}{name.upper()}" for name in fields}
    for module in ("config.py", "opensearch_settings.py"):
        names |= set(re.findall(r"\bMEMORY_[A-Z][A-Z0-9_]*[A-Z0-9]\b", (ROOT / "service" / module).read_text()))
    return names - NOT_SETTINGS - {"MEMORY_PROT"}  # the names config.py knows are no settings, its docstring's example


def documented_rows() -> Counter[str]:
    """How many table rows name each MEMORY_* variable in their first cell, across README.md and docs/*.md."""
    rows: Counter[str] = Counter()
    for path in markdown_files():
        for _, line in prose_lines(path):
            if line.startswith("|") and not re.match(r"^\|[\s:|-]*$", line):
                first_cell = line.split("|")[1]
                rows.update(re.findall(r"`(MEMORY_[A-Z0-9_]+)`", first_cell))
    return rows


def test_every_setting_is_documented_in_exactly_one_table_row() -> None:
    variables, rows = settings_variables(), documented_rows()
    assert len(variables) >= 40, sorted(variables)  # the settings object was read
    missing = sorted(v for v in variables if rows[v] == 0)
    repeated = sorted(f"{v} ({rows[v]} rows)" for v in variables if rows[v] > 1)
    unknown = sorted(v for v in rows if v not in variables)
    assert not missing, f"settings in no table row of README.md or docs/*.md: {missing}"
    assert not repeated, f"settings in more than one table row: {repeated}"
    assert not unknown, f"table rows name variables no setting reads: {unknown}"


def test_the_architecture_page_names_every_module() -> None:
    """Issue 56: docs/architecture.md's layout names every module of service/ by its file name (packages'
    __init__.py and the Alembic migrations aside), so a module added without a word there fails here."""
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    modules = [p for p in sorted((ROOT / "service").rglob("*.py"))
               if p.name != "__init__.py" and "migrations" not in p.parts]
    unnamed = [str(p.relative_to(ROOT)) for p in modules if p.name not in page]
    assert modules and not unnamed, "docs/architecture.md does not name:\n  " + "\n  ".join(unnamed)
