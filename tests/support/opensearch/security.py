"""The secured variant's side of a Node: the security plugin's demo configuration installed into the node's
own config and cut down to least privilege (at create()), and users and roles through the plugin's REST API
(as the admin). NodeSecurity is a base class of Node and uses the Node's directory, distribution,
config_dir, admin_password, secured and request()."""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tests.support.opensearch.settings import (ADMIN_USER, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY, DEMO_CA,
                                               SECURITY_PLUGIN, NodeUnavailable, java_home)


class SecurityApiError(Exception):
    """The security plugin's REST API refused a call (status and body in the message)."""

    def __init__(self, method: str, path: str, status: int, body: object) -> None:
        super().__init__(f"{method} {path}: {status} {body}")
        self.status = status
        self.body = body


def _drop_top_level_keys(path: Path, drop: Callable[[str], bool]) -> None:
    """Remove the top-level entries of a security-plugin YAML file (a key at column 0 and its indented
    block) whose key `drop` names; comments and everything else stay as they are."""
    kept, dropping = [], False
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line[:1] not in ("", " ", "\t", "#", "-", "\n") and ":" in line:
            dropping = drop(line.split(":", 1)[0].strip().strip('"'))
        if not dropping or line.startswith("#"):
            kept.append(line)
    path.write_text("".join(kept), encoding="utf-8")


def new_admin_password() -> str:
    """Random, and passes the demo installer's check (upper, lower, digit, special; zxcvbn "strong")."""
    return f"Aa1-{secrets.token_urlsafe(18)}"


class NodeSecurity:
    """A secured Node's demo configuration (at create()) and its users and roles (the module's docstring)."""

    # --- the demo configuration, installed into the node's own config (Node.create) -------------------------

    def _install_demo_security(self) -> None:
        """The security plugin's demo installer, run into this node's own config directory.

        tools/install_demo_configuration.sh is one line: `java -cp … democonfig.Installer <its own dir> ARGS`,
        and the Installer writes into <that dir>/../../../config (the distribution's, shared by every node).
        So the same class runs here with a directory whose config/ is this node's (bin, lib and plugins link
        to the distribution): demo certificates, the TLS and security settings appended to opensearch.yml,
        the admin's bcrypt hash in opensearch-security/internal_users.yml. `-y` no questions, `-i` the node
        initialises its security index from those files on first start, `-s` quit quietly if already done.
        It needs no root and no PATH (java is named); run as the caller, the files are chowned afterwards."""
        base = self.directory / "demo-installer"
        base.mkdir()
        try:
            for name in ("bin", "lib", "plugins"):
                (base / name).symlink_to(self.distribution / name)
            (base / "config").symlink_to(self.config_dir)
            plugin = self.distribution / "plugins" / SECURITY_PLUGIN
            classpath = f"{plugin}/*:{self.distribution}/lib/*:{plugin}/deps/*"  # as the script's
            result = subprocess.run(
                [str(java_home() / "bin" / "java"), "-Dorg.apache.logging.log4j.simplelog.StatusLogger.level=OFF",
                 "-cp", classpath, "org.opensearch.security.tools.democonfig.Installer",
                 str(base / "plugins" / SECURITY_PLUGIN / "tools"), "-y", "-i", "-s"],
                capture_output=True, text=True, timeout=300,
                env=dict(os.environ, OPENSEARCH_INITIAL_ADMIN_PASSWORD=self.admin_password))
        finally:
            for name in ("bin", "lib", "plugins", "config"):
                (base / name).unlink(missing_ok=True)  # the links only, never what they point to
            base.rmdir()
        output = (result.stdout + result.stderr).strip()
        (self.directory / "demo-installer.out").write_text(output.replace(self.admin_password, "<admin password>")
                                                          + "\n", encoding="utf-8")
        admin_script = self.config_dir / "securityadmin_demo.sh"  # names the links just removed: the real paths
        if admin_script.exists():
            admin_script.write_text(admin_script.read_text(encoding="utf-8")
                                    .replace(f"{base}/plugins/", f"{self.distribution}/plugins/")
                                    .replace(f"{base}/config/", f"{self.config_dir}/"), encoding="utf-8")
        missing = [name for name in (DEMO_CA, DEMO_ADMIN_CERT, DEMO_ADMIN_KEY) if not (self.config_dir / name).exists()]
        if result.returncode != 0 or "### Success" not in output or missing:
            raise NodeUnavailable(f"the security demo installer failed (exit {result.returncode}, missing "
                                  f"{missing or 'nothing'}):\n{output[-2000:]}")

    def _least_privilege_baseline(self) -> None:
        """Take out of the demo configuration what would give a test's user more than the test's role:
        the mapping of every user ("*") to the static role own_index (cluster_composite_ops -- bulk, msearch,
        mget, aliases, reindex -- and indices_all on an index named like the user), and the demo users with
        published passwords (kibanaserver, readall, logstash, …); and the audit log (below). What stays:
        admin (all_access, the security REST API), the TLS settings and certificates, every role and action
        group."""
        security = self.config_dir / "opensearch-security"
        _drop_top_level_keys(security / "roles_mapping.yml", lambda key: key == "own_index")
        _drop_top_level_keys(security / "internal_users.yml", lambda key: key not in ("_meta", ADMIN_USER))
        # The demo's audit log (internal_opensearch) needs an index auto-created (this node allows none) with a
        # replica (a single node stays yellow after the first failed login, and a restart never sees green).
        yml = self.config_dir / "opensearch.yml"
        text = yml.read_text(encoding="utf-8")
        audit = "plugins.security.audit.type: internal_opensearch\n"
        if audit not in text:
            raise NodeUnavailable(f"the demo installer wrote no audit setting to {yml}; has it changed?")
        text = text.replace(audit, "plugins.security.audit.type: noop  # was internal_opensearch\n")
        # The admin may change the plugin's dynamic config over its REST API (set_security_config): tests turn
        # do_not_fail_on_forbidden on and off (memory opensearch check must notice it).
        text += "plugins.security.unsupported.restapi.allow_securityconfig_modification: true\n"
        yml.write_text(text, encoding="utf-8")

    # --- users and roles (secured nodes; the security plugin's REST API, as the admin) ----------------------

    def _security(self, method: str, path: str, body: object = None, *, missing_ok: bool = False) -> Any:
        if not self.secured:
            raise NodeUnavailable("an open node has no users or roles")
        full = f"/_plugins/_security/api/{path}"
        status, answer = self.request(method, full, body)
        if status == 404 and missing_ok:
            return None
        if status >= 300:
            raise SecurityApiError(method, full, status, answer)
        return answer

    def set_security_config(self, setting: str, value: object) -> None:
        """Set one setting of the plugin's dynamic config (config.dynamic.<setting>, as securityadmin would)."""
        self._security("PATCH", "securityconfig", [{"op": "add", "path": f"/config/dynamic/{setting}",
                                                    "value": value}])

    def create_role(self, name: str, *, cluster_permissions: Iterable[str] = (),
                    index_permissions: Iterable[Mapping[str, Any]] = ()) -> None:
        """Create (or replace) role `name`. `index_permissions` in the plugin's own shape:
        [{"index_patterns": ["team-*"], "allowed_actions": ["crud", "indices:admin/create"]}, …]
        (action groups such as `crud`, `read`, `write`, or action names as the plugin spells them)."""
        self._security("PUT", f"roles/{name}", {"cluster_permissions": list(cluster_permissions),
                                                "index_permissions": [dict(p) for p in index_permissions]})

    def create_user(self, name: str, password: str, *, roles: Sequence[str] = ()) -> None:
        """Create (or replace) internal user `name` and map it to `roles` (added to each role's mapping).
        The plugin checks the password: at least 8 characters and zxcvbn-"strong" (a random one is)."""
        self._security("PUT", f"internalusers/{name}", {"password": password})
        for role in roles:
            self.map_role(role, users=[name])

    def map_role(self, role: str, *, users: Sequence[str]) -> None:
        """Add `users` to `role`'s mapping (created if there is none)."""
        current = self._security("GET", f"rolesmapping/{role}", missing_ok=True) or {}
        mapping = current.get(role, {})
        self._security("PUT", f"rolesmapping/{role}", {
            "users": sorted({*mapping.get("users", []), *users}),
            "backend_roles": mapping.get("backend_roles", []), "hosts": mapping.get("hosts", [])})

    def delete_user(self, name: str) -> None:
        """Remove internal user `name` and its entries in role mappings (a missing user is fine)."""
        mappings = self._security("GET", "rolesmapping") or {}
        for role, mapping in mappings.items():
            if name in mapping.get("users", []) and not mapping.get("reserved") and not mapping.get("hidden"):
                self._security("PUT", f"rolesmapping/{role}", {
                    "users": [user for user in mapping["users"] if user != name],
                    "backend_roles": mapping.get("backend_roles", []), "hosts": mapping.get("hosts", [])})
        self._security("DELETE", f"internalusers/{name}", missing_ok=True)

    def delete_role(self, name: str) -> None:
        """Remove role `name` and its mapping (a missing role is fine)."""
        self._security("DELETE", f"rolesmapping/{name}", missing_ok=True)
        self._security("DELETE", f"roles/{name}", missing_ok=True)

