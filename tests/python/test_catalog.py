"""The plugin is catalog-ready (docs/HERMES.md, "Plugin catalog"): Hermes's admission checks (the stand-in of
``hermes plugins validate``, stubs/plugin_validate.py) pass on the installed plugin and on the repository's
``plugin/`` directory with no failure and no warning, the manifest declares exactly what ``register()``
registers, the catalog entry in docs/HERMES.md says the same, and the checks are real (each fails on a manifest
made wrong on purpose). Run from the repository root after `npm run build`:

    python3 -m unittest discover -s tests/python -t tests/python -p test_catalog.py
"""

from __future__ import annotations

import ast
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from stubs import hermes as stub
from stubs import plugin_validate

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "src" / "cli" / "main.js"
NODE = shutil.which("node")
SOURCE_PLUGIN = REPO / "plugin"
# ctx surfaces register() may use that no manifest field declares and Hermes's validate does not audit (the probe
# accepts them as no-ops): context-reference providers and system prompt sections (docs/HERMES.md, "Plugin catalog").
UNDECLARED_SURFACES = frozenset({"register_context_reference", "register_system_prompt_section"})


def setUpModule():
    if NODE is None or not CLI.is_file():
        raise unittest.SkipTest("the catalog tests need node and the built CLI (npm run build)")


@contextlib.contextmanager
def hermes_interpreter(site: Path):
    """Child interpreters see the Hermes stand-ins (as Hermes's own interpreter sees Hermes) and write no bytecode
    into the plugin directories."""
    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    os.environ["PYTHONPATH"] = str(site)
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def catalog_entry() -> dict:
    """The catalog entry docs/HERMES.md gives (the ```yaml block under "Plugin catalog"), parsed: top-level scalars
    and the ``capabilities:`` mapping of flow lists."""
    text = (REPO / "docs" / "HERMES.md").read_text(encoding="utf-8")
    section = text.split("\n## Plugin catalog\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    entry: dict = {}
    capabilities = None
    for line in block.splitlines():
        if line.startswith("  ") and capabilities is not None:
            key, _, value = line.strip().partition(":")
            capabilities[key] = stub.parse_manifest(f"x: {value.strip()}")["x"]
        elif line.startswith("capabilities:"):
            capabilities = entry["capabilities"] = {}
        elif line.strip():
            entry.update(stub.parse_manifest(line))
    return entry


class CatalogTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(os.path.realpath(tempfile.mkdtemp(prefix="mb-catalog-")))
        os.chmod(cls.tmp, 0o700)
        cls.home = cls.tmp / "home"
        cls.home.mkdir(mode=0o700)
        done = subprocess.run([NODE, str(CLI), "install", "--home", str(cls.home)], capture_output=True, text=True)
        if done.returncode != 0:
            raise AssertionError(done.stderr)
        cls.installed = cls.home / "plugins" / "memory-bridge"
        cls.site = plugin_validate.probe_site(Path(tempfile.mkdtemp(dir=cls.tmp)))
        cls.manifest = stub.parse_manifest((SOURCE_PLUGIN / "plugin.yaml").read_text(encoding="utf-8"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def validate(self, plugin_dir: Path) -> plugin_validate.Report:
        with hermes_interpreter(self.site):
            return plugin_validate.validate(plugin_dir)

    def copy(self, name: str, edit) -> Path:
        """A copy of the source plugin whose plugin.yaml text is ``edit(text)``."""
        target = self.tmp / name
        shutil.copytree(SOURCE_PLUGIN, target)
        manifest = target / "plugin.yaml"
        manifest.write_text(edit(manifest.read_text(encoding="utf-8")), encoding="utf-8")
        return target

    def assert_clean(self, report: plugin_validate.Report) -> None:
        self.assertTrue(report.ok, report.failures)
        self.assertEqual(report.warnings, [])
        names = [name for name, _, _ in report.checks]
        for expected in ("manifest fields", "requires_hermes", "requires_env", "capability probe", "declared tools"):
            self.assertIn(expected, names)

    def test_the_installed_plugin_passes_with_no_error_and_no_warning(self):
        report = self.validate(self.installed)
        self.assert_clean(report)
        self.assertEqual(report.recorded["tools"], ["memory_bridge_search", "memory_bridge_read"])

    def test_the_repository_plugin_directory_passes_as_the_catalog_checks_it(self):
        # The catalog pins a commit of the repository and validates its plugin/ subdirectory (no install.json); a
        # copy, since register() leaves its Hermes API report beside itself.
        self.assert_clean(self.validate(self.copy("checkout", lambda text: text)))

    def test_the_manifest_declares_exactly_what_register_registers(self):
        recorded = self.validate(self.installed).recorded
        for kind, key in plugin_validate.AUDITED:
            with self.subTest(kind=kind):
                self.assertEqual(sorted(self.manifest.get(key, [])), sorted(recorded[kind]))
        self.assertEqual(recorded["commands"], [])
        registrations = {name for name in recorded["other"] if name.startswith("register_")}
        self.assertLessEqual(registrations, UNDECLARED_SURFACES, "a ctx surface this test does not know")

    def test_the_manifest_carries_what_the_catalog_shows(self):
        for key in ("name", "version", "description", "author", "license", "homepage"):
            with self.subTest(key=key):
                self.assertIsInstance(self.manifest.get(key), str)
                self.assertTrue(self.manifest[key].strip())
        self.assertEqual(self.manifest["license"], "MIT")
        self.assertTrue(self.manifest["homepage"].startswith("https://"))
        self.assertEqual(self.manifest["requires_env"], [])
        self.assertEqual(self.manifest["capabilities"], [])  # no consent-gated capability is used
        self.assertNotIn("requires_hermes", self.manifest)

    def test_the_catalog_entry_in_the_docs_matches_the_manifest(self):
        entry = catalog_entry()
        self.assertEqual(entry["name"], self.manifest["name"])
        self.assertEqual(entry["description"], self.manifest["description"])
        self.assertEqual(entry["subdir"], "plugin")
        self.assertTrue(entry["repo"].startswith("https://"))
        self.assertNotIn("requires_hermes", entry)
        declared = {key: self.manifest.get(key, []) for key in ("provides_tools", "provides_hooks", "requires_env")}
        declared["provides_middleware"] = self.manifest.get("provides_middleware", [])
        self.assertEqual(entry["capabilities"], declared)

    def test_the_shim_imports_no_hermes_module_statically(self):
        # Newer validate releases warn on imports of Hermes modules outside its public plugin API; the shim reads
        # Hermes's context helpers through importlib at call time and imports only the standard library.
        tree = ast.parse((SOURCE_PLUGIN / "__init__.py").read_text(encoding="utf-8"))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add(node.module.split(".")[0])
        self.assertLessEqual(imported, set(sys.stdlib_module_names) | {"__future__"})

    def test_each_check_fails_on_a_manifest_made_wrong(self):
        cases = {
            "undeclared tool": (lambda t: t.replace("  - memory_bridge_read\n", ""), "declared tools", None),
            "unregistered tool": (lambda t: t.replace("  - memory_bridge_read\n", "  - memory_bridge_read\n  - ghost\n"), None, "ghost"),
            "unregistered hook": (lambda t: t.replace("  - pre_llm_call\n", "  - pre_llm_call\n  - on_session_start\n"), None, "on_session_start"),
            "unparsable floor": (lambda t: t + 'requires_hermes: ">=soon"\n', "requires_hermes", None),
            "lower-case env": (lambda t: t.replace("requires_env: []", "requires_env: [memory_home]"), "requires_env", None),
            "no description": (lambda t: t.replace("description: ", "summary: "), "manifest fields", None),
            "built-in name": (lambda t: t.replace("  - memory_bridge_read\n", "  - memory_bridge_read\n  - memory\n"), "built-in tool collisions", None),
        }  # fmt: skip
        for label, (edit, failing, warned) in cases.items():
            with self.subTest(case=label):
                report = self.validate(self.copy(label.replace(" ", "-"), edit))
                failed = [name for name, passed, _ in report.checks if not passed]
                self.assertEqual(failed, [failing] if failing else [], report.checks)
                if warned is not None:
                    self.assertEqual(len(report.warnings), 1)
                    self.assertIn(warned, report.warnings[0])


if __name__ == "__main__":
    unittest.main()
