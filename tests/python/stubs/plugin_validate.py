"""A stand-in for Hermes Agent's ``hermes plugins validate`` (``hermes_cli/plugin_validate.py``): the admission
checks the plugin catalog's CI runs on a candidate plugin directory, rewritten here check by check.

What it checks, in Hermes's order, each check passing or failing with a detail, plus warnings that do not fail:

1. ``plugin.yaml`` (else ``plugin.yml``) exists and parses to a mapping. Hermes parses it with its YAML loader;
   the stand-in uses the manifest subset of ``stubs.hermes.parse_manifest`` (scalars, block and flow lists).
2. ``name``, ``version`` and ``description`` are present and non-empty.
3. ``requires_hermes``, when given, parses strictly: every comma-separated clause is a version with an optional
   comparator (``>=``, ``<=``, ``==``, ``!=``, ``>``, ``<``) whose version cuts to numeric parts.
4. ``config_schema``, when given, is a mapping of key to mapping with a known ``type`` and a boolean ``required``.
5. ``requires_env`` is a list of UPPER_SNAKE_CASE names (strings, or mappings with ``name``).
6. The capability probe: a fresh interpreter (the running one, ``sys.executable``, with a throwaway
   ``HERMES_HOME`` and otherwise this process's environment) imports ``__init__.py`` as a package the way Hermes's
   plugin manager does and calls ``register()`` with a recording context. Tools, hooks and middleware registered
   but not declared in ``provides_tools`` / ``provides_hooks`` / ``provides_middleware`` fail; declared but not
   registered ones are warnings. Any other ``ctx`` surface is accepted as a no-op (Hermes does not audit it); the
   stand-in also records those calls under ``other`` for the tests, which the checks do not read.
7. No tool name collides with a built-in tool (Hermes asks its registry; the stand-in takes the names).

Hermes runs the probe in Hermes's own interpreter, where Hermes's modules import. A test gives the probe the same
by putting a ``sitecustomize`` that installs ``stubs.hermes`` on ``PYTHONPATH`` (``probe_site``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from stubs import hermes as stub

PROBE_TIMEOUT_SECONDS = 30
_MARK = "VALIDATE_PROBE_RESULT:"
_UPPER_SNAKE = re.compile(r"^[A-Z][A-Z0-9_]*$")
_COMPARATOR = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(.+?)\s*$")
_SCHEMA_TYPES = frozenset(
    {"str", "string", "int", "integer", "float", "number", "bool", "boolean", "list", "array", "dict", "mapping", "map"}
)
# The three registration kinds the probe audits against the manifest: (recorded kind, manifest key).
AUDITED = (("tools", "provides_tools"), ("hooks", "provides_hooks"), ("middleware", "provides_middleware"))
# A sample of Hermes's built-in tool names (its tools registry), for the collision check.
BUILTIN_TOOLS = (
    "terminal", "read_file", "write_file", "patch", "search", "web_search", "web_extract", "web_crawl",
    "browser_navigate", "browser_click", "vision_analyze", "image_generate", "text_to_speech", "mixture_of_agents",
    "skills_list", "skill_view", "skill_manage", "todo", "memory", "session_search",
)  # fmt: skip


@dataclass
class Report:
    """Every check as (name, passed, detail), and the warnings. ``ok`` when every check passed."""

    checks: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    recorded: dict | None = None

    @property
    def ok(self) -> bool:
        return all(passed for _, passed, _ in self.checks)

    @property
    def failures(self) -> list:
        return [detail or name for name, passed, detail in self.checks if not passed]

    def add(self, name: str, passed: bool, detail: str = "") -> None:
        self.checks.append((name, passed, detail))


def _version_parts(text: str) -> tuple | None:
    """``v1.2.3-rc1`` → (1, 2, 3), padded with zeros; None when a part is not a number."""
    head = re.split(r"[-+]", str(text).strip().lstrip("v"), maxsplit=1)[0].split(".")
    head += ["0"] * (3 - len(head))
    try:
        return tuple(int(part) for part in head[:3])
    except ValueError:
        return None


def _strict_spec(spec: str) -> bool:
    for clause in (c.strip() for c in spec.split(",")):
        if clause == "":
            continue
        m = _COMPARATOR.match(clause)
        if _version_parts(m.group(2) if m else clause) is None:
            return False
    return True


def _check_fields(report: Report, manifest: dict) -> None:
    missing = [key for key in ("name", "version", "description") if not manifest.get(key)]
    detail = f"missing: {', '.join(missing)}" if missing else "name, version, description"
    report.add("manifest fields", not missing, detail)


def _check_requires_hermes(report: Report, manifest: dict) -> None:
    spec = str(manifest.get("requires_hermes") or "").strip()
    if spec == "":
        report.add("requires_hermes", True, "not declared")
    else:
        report.add("requires_hermes", _strict_spec(spec), f"spec {spec!r}")


def _check_config_schema(report: Report, manifest: dict) -> None:
    schema = manifest.get("config_schema")
    if schema in (None, [], {}):
        report.add("config schema", True, "not declared")
        return
    problems = []
    if not isinstance(schema, dict):
        problems.append("config_schema must be a mapping")
    else:
        for key, spec in schema.items():
            if not isinstance(spec, dict):
                problems.append(f"config_schema.{key} must be a mapping")
                continue
            kind = spec.get("type")
            if kind is not None and str(kind).lower() not in _SCHEMA_TYPES:
                problems.append(f"config_schema.{key}: unknown type")
            if spec.get("required") is not None and not isinstance(spec.get("required"), bool):
                problems.append(f"config_schema.{key}: required must be a boolean")
    report.add("config schema", not problems, "; ".join(problems) or "shape valid")


def _check_requires_env(report: Report, manifest: dict) -> None:
    entries = manifest.get("requires_env") or []
    problems = []
    if not isinstance(entries, list):
        problems.append("requires_env must be a list")
        entries = []
    for i, entry in enumerate(entries):
        if isinstance(entry, dict):
            entry = str(entry.get("name") or "")
        if not isinstance(entry, str):
            problems.append(f"requires_env[{i}] must be a string or mapping")
        elif not _UPPER_SNAKE.match(entry):
            problems.append(f"requires_env[{i}] {entry!r} is not UPPER_SNAKE_CASE")
    report.add("requires_env", not problems, "; ".join(problems) or "all UPPER_SNAKE")


# Runs in a fresh interpreter: import the plugin as a package, call register() with a recording context, print
# one marked JSON line. It imports nothing of Hermes itself.
_PROBE = r"""
import importlib.util, json, sys
plugin_dir, mark = sys.argv[1], sys.argv[2]
seen = {"tools": [], "hooks": [], "middleware": [], "commands": [], "other": []}

class Recording:
    plugin_config = {}
    profile_name = "default"
    def register_tool(self, name, *args, **kwargs):
        seen["tools"].append(str(name))
    def register_hook(self, hook_name, callback):
        seen["hooks"].append(str(hook_name))
    def register_middleware(self, kind, callback):
        seen["middleware"].append(str(kind))
    def register_command(self, name, *args, **kwargs):
        seen["commands"].append(str(name))
    def register_cli_command(self, name, *args, **kwargs):
        seen["commands"].append(str(name))
    def get_config(self, key, default=None):
        return default
    def __getattr__(self, name):
        def accept(*args, **kwargs):
            seen["other"].append(name)
            return None
        return accept

def finish(payload):
    print(mark + json.dumps(payload))
    sys.exit(0)

try:
    spec = importlib.util.spec_from_file_location(
        "validate_probe_plugin", plugin_dir + "/__init__.py", submodule_search_locations=[plugin_dir])
    module = importlib.util.module_from_spec(spec)
    module.__path__ = [plugin_dir]
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
except Exception as exc:
    finish({"error": "import failed: %s" % exc})
register = getattr(module, "register", None)
if register is None:
    finish({"error": "no register() function"})
try:
    register(Recording())
except Exception as exc:
    finish({"error": "register() raised: %s" % exc})
finish(seen)
"""


def _probe(plugin_dir: Path) -> tuple[dict | None, str]:
    """(what register() registered, "") or (None, why the probe gave nothing)."""
    with tempfile.TemporaryDirectory(prefix="validate-home-") as scratch:
        env = dict(os.environ, HERMES_HOME=scratch)
        try:
            done = subprocess.run(
                [sys.executable, "-c", _PROBE, str(plugin_dir), _MARK],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_SECONDS,
                env=env,
            )
        except subprocess.TimeoutExpired:
            return None, f"capability probe timed out after {PROBE_TIMEOUT_SECONDS}s"
    payload = None
    for line in done.stdout.splitlines():
        if line.startswith(_MARK):
            try:
                payload = json.loads(line[len(_MARK) :])
            except ValueError:
                payload = None
    if payload is None:
        return None, f"capability probe gave no result (exit {done.returncode}): {done.stderr.strip()}"
    if "error" in payload:
        return None, str(payload["error"])
    return payload, ""


def _declared(manifest: dict, key: str) -> set:
    raw = manifest.get(key) or []
    return {item for item in raw if isinstance(item, str)} if isinstance(raw, list) else set()


def _check_capabilities(report: Report, manifest: dict, plugin_dir: Path) -> None:
    if not (plugin_dir / "__init__.py").is_file():
        report.warnings.append("no __init__.py: capability probe skipped")
        report.add("capability probe", True, "skipped")
        return
    recorded, why = _probe(plugin_dir)
    if recorded is None:
        report.add("capability probe", False, why)
        return
    report.recorded = recorded
    report.add("capability probe", True, "register() ran in a fresh interpreter")
    for kind, key in AUDITED:
        declared, actual = _declared(manifest, key), set(recorded.get(kind) or [])
        extra, absent = sorted(actual - declared), sorted(declared - actual)
        report.add(f"declared {kind}", not extra, f"registered but not in {key}: {', '.join(extra)}" if extra else "")
        if absent:
            report.warnings.append(f"{key} declares {', '.join(absent)}, which register() did not register")


def _check_collisions(report: Report, manifest: dict, builtin: tuple) -> None:
    names = _declared(manifest, "provides_tools") | set((report.recorded or {}).get("tools") or [])
    clash = sorted(names & set(builtin))
    report.add("built-in tool collisions", not clash, ", ".join(clash))


def validate(plugin_dir: Path, builtin: tuple = BUILTIN_TOOLS) -> Report:
    """Every admission check on ``plugin_dir`` (see the module docstring); never raises for a bad plugin."""
    report = Report()
    plugin_dir = Path(plugin_dir)
    if not plugin_dir.is_dir():
        report.add("plugin directory", False, "not a directory")
        return report
    manifest_file = next((plugin_dir / n for n in ("plugin.yaml", "plugin.yml") if (plugin_dir / n).is_file()), None)
    if manifest_file is None:
        report.add("manifest", False, "no plugin.yaml")
        return report
    try:
        manifest = stub.parse_manifest(manifest_file.read_text(encoding="utf-8-sig"))
    except Exception as exc:
        report.add("manifest", False, f"plugin.yaml does not parse: {exc}")
        return report
    if not isinstance(manifest, dict):
        report.add("manifest", False, "plugin.yaml is not a mapping")
        return report
    report.add("manifest", True, "plugin.yaml parses")
    _check_fields(report, manifest)
    _check_requires_hermes(report, manifest)
    _check_config_schema(report, manifest)
    _check_requires_env(report, manifest)
    _check_capabilities(report, manifest, plugin_dir)
    _check_collisions(report, manifest, builtin)
    return report


def probe_site(directory: Path) -> Path:
    """Write ``<directory>/sitecustomize.py``, which installs the Hermes stand-ins (``stubs.hermes``) into any
    interpreter started with ``directory`` on ``PYTHONPATH``, their home being that process's ``HERMES_HOME``."""
    tests_python = Path(__file__).resolve().parents[1]
    (directory / "sitecustomize.py").write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {str(tests_python)!r})\n"
        "from stubs import hermes\n"
        "hermes.install(hermes.HermesState(os.environ.get('HERMES_HOME', '/nonexistent')))\n",
        encoding="utf-8",
    )
    return directory
