"""Tests of the Hermes plugin shim (plugin/__init__.py) against stub Hermes modules and a real worker.

Each test installs the plugin with the real `memory-bridge install` into a temporary profile home, imports the
installed __init__.py as a fresh module, and calls the registered handlers the way Hermes does. The worker is the
built CLI (dist/src/cli/main.js) run by the current `node`; misbehaving workers are small Python scripts named in
install.json instead. Run from the repository root:

    python3 -m unittest discover -s tests/python -t tests/python
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from stubs import hermes as stub

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "dist" / "src" / "cli" / "main.js"
NODE = shutil.which("node")
UNAVAILABLE = {"ok": False, "error": {"code": "unavailable", "message": "Memory is unavailable."}}
_counter = itertools.count()


def setUpModule():
    if NODE is None:
        raise unittest.SkipTest("node is not on PATH; the shim tests need the built CLI")
    if not CLI.is_file():
        raise unittest.SkipTest(f"{CLI} is missing; run `npm run build` first")


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def __str__(self) -> str:
        return "shim log: " + "; ".join(self.messages)


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _write(path: Path, text: str) -> Path:
    _mkdir(path.parent)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, 0o600)
    return path


def _policy(root: Path, **extra) -> dict:
    policy = {"version": 1, "root": str(root), "allow": ["projects/**"], "deny": ["**/private/**"]}
    policy.update(extra)
    return policy


class ShimTestCase(unittest.TestCase):
    """A temporary tree: notes, a profile home with the plugin installed, and stub Hermes modules."""

    def setUp(self):
        self.tmp = Path(os.path.realpath(tempfile.mkdtemp(prefix="mb-shim-")))
        os.chmod(self.tmp, 0o700)
        self.notes = _mkdir(self.tmp / "notes")
        _write(self.notes / "projects" / "garden.md", "# Lantern Garden\n\nThe lantern garden needs watering on Fridays.\n")
        _write(self.notes / "projects" / "private" / "salary.md", "# Salary\n\nlantern secret figures\n")
        _write(self.notes / "decisions" / "watering.md", "# Watering decision\n\nWe water the lantern garden at dawn.\n")
        self.home = self.make_home("home", _policy(self.notes))
        self.install_plugin(self.home)
        self.state = stub.HermesState(str(self.home))
        stub.install(self.state)
        self.ctx = stub.StubContext(profile_name="default")
        self.shim = self.load_shim(self.home)
        # A loaded test machine can be slow to start node; only the timeout test wants a short limit.
        self.shim.CALL_TIMEOUT_SECONDS = 120.0
        self.shim.register(self.ctx)
        # The shim's reason codes, shown when an assertion about a result fails.
        self.reasons = _Collector()
        logger = logging.getLogger("memory_bridge")
        logger.addHandler(self.reasons)
        logger.setLevel(logging.INFO)  # also the worker's stderr lines
        self.saved_env = {k: os.environ.get(k) for k in ("HERMES_PLUGIN_HOST_PROCESS", "MEMORY_BRIDGE_TIMEOUT")}
        os.environ.pop("HERMES_PLUGIN_HOST_PROCESS", None)
        os.environ.pop("MEMORY_BRIDGE_TIMEOUT", None)

    def tearDown(self):
        logging.getLogger("memory_bridge").removeHandler(self.reasons)
        try:
            self.shim._close_all()
        finally:
            for k, v in self.saved_env.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            stub.uninstall()
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers ---------------------------------------------------------------------------------------------

    def make_home(self, name: str, policy: dict) -> Path:
        home = _mkdir(self.tmp / name)
        _write(home / "plugin-data" / "memory-bridge" / "policy.json", json.dumps(policy))
        return home

    def set_policy(self, home: Path, policy: dict) -> None:
        _write(home / "plugin-data" / "memory-bridge" / "policy.json", json.dumps(policy))

    def install_plugin(self, home: Path) -> None:
        done = subprocess.run([NODE, str(CLI), "install", "--home", str(home)], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)

    def load_shim(self, home: Path):
        path = home / "plugins" / "memory-bridge" / "__init__.py"
        name = f"memory_bridge_shim_{next(_counter)}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    def search(self, args=None, **kwargs):
        handler = self.ctx.handler("memory_bridge_search")
        raw = handler({"query": "lantern"} if args is None else args, **kwargs)
        self.assertIsInstance(raw, str)
        return json.loads(raw)

    def read(self, note_id: str):
        raw = self.ctx.handler("memory_bridge_read")({"id": note_id})
        self.assertIsInstance(raw, str)
        return json.loads(raw)

    def use_fake_worker(self, body: str) -> Path:
        """Point install.json at a Python script instead of the real worker."""
        script = _write(self.tmp / f"fake_worker_{next(_counter)}.py", body)
        record_path = self.home / "plugins" / "memory-bridge" / "install.json"
        record = json.loads(record_path.read_text())
        record["node"] = sys.executable
        record["cli"] = str(script)
        _write(record_path, json.dumps(record))
        return script

    def recording_worker(self) -> Path:
        """A fake worker that saves each request line and answers with an empty, valid search result."""
        log = self.tmp / "requests.jsonl"
        self.use_fake_worker(
            "import json, sys\n"
            "for line in sys.stdin:\n"
            f"    open({str(log)!r}, 'a').write(line)\n"
            "    req = json.loads(line)\n"
            "    out = {'v': 1, 'id': req['id'], 'result': {'ok': True, 'results': [], 'truncated': False}}\n"
            "    sys.stdout.write(json.dumps(out) + '\\n'); sys.stdout.flush()\n"
        )
        return log

    def client(self):
        return self.shim._clients[-1]


class RegistrationTests(ShimTestCase):
    def test_registers_both_tools_in_the_memory_bridge_toolset(self):
        names = [r["name"] for r in self.ctx.registrations]
        self.assertEqual(names, ["memory_bridge_search", "memory_bridge_read"])
        for r in self.ctx.registrations:
            self.assertEqual(r["toolset"], "memory_bridge")
            self.assertEqual(r["schema"]["name"], r["name"])
            self.assertFalse(r["is_async"])
            self.assertTrue(r["schema"]["description"])

    def test_parameters_equal_the_mcp_input_schemas(self):
        script = (
            f"import({json.dumps((REPO / 'dist' / 'src' / 'tools' / 'schemas.js').as_uri())})"
            ".then(m => process.stdout.write(JSON.stringify({s: m.SEARCH_INPUT_SCHEMA, r: m.READ_INPUT_SCHEMA})))"
        )
        done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
        ours = json.loads(done.stdout)
        by_name = {r["name"]: r["schema"]["parameters"] for r in self.ctx.registrations}
        self.assertEqual(by_name["memory_bridge_search"], ours["s"])
        self.assertEqual(by_name["memory_bridge_read"], ours["r"])
        self.assertIs(by_name["memory_bridge_search"]["additionalProperties"], False)

    def test_manifest_lists_exactly_the_registered_tools_and_the_package_version(self):
        text = (REPO / "plugin" / "plugin.yaml").read_text()
        listed = [line.strip()[2:] for line in text.splitlines() if line.startswith("  - ")]
        self.assertEqual(listed, [r["name"] for r in self.ctx.registrations])
        version = json.loads((REPO / "package.json").read_text())["version"]
        self.assertIn(f"\nversion: {version}\n", text)
        self.assertIn("\nname: memory-bridge\n", text)
        self.assertIn("\nkind: standalone\n", text)

    def test_registering_starts_no_worker(self):
        self.assertIsNone(self.client()._worker)


class InteractiveCallTests(ShimTestCase):
    def test_search_returns_allowed_notes_through_the_real_worker(self):
        result = self.search()
        self.assertIs(result["ok"], True, self.reasons)
        ids = [hit["id"] for hit in result["results"]]
        self.assertEqual(ids, ["projects/garden.md"])
        self.assertEqual(set(result), {"ok", "results", "truncated"})

    def test_read_returns_an_allowed_note_and_refuses_a_denied_one(self):
        ok = self.read("projects/garden.md")
        self.assertEqual((ok["ok"], ok["id"]), (True, "projects/garden.md"))
        self.assertIn("Lantern Garden", ok["content"])
        denied = self.read("projects/private/salary.md")
        self.assertEqual(denied["error"]["code"], "not_found_or_denied")

    def test_handler_accepts_extra_keyword_arguments(self):
        self.assertIs(self.search(task_id="t-1", session_id="s")["ok"], True, self.reasons)

    def test_calls_work_when_the_process_holds_more_than_1024_descriptors(self):
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 1200:
            self.skipTest(f"descriptor limit {soft} is too low for this test")
        held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
        try:
            self.assertIs(self.search()["ok"], True, self.reasons)
            self.assertGreater(self.client()._worker.proc.stdout.fileno(), 1024)
        finally:
            for fd in held:
                os.close(fd)

    def test_concurrent_calls_from_several_threads_each_get_their_own_answer(self):
        import threading

        results: dict[int, dict] = {}

        def call(i: int) -> None:
            if i % 2:
                results[i] = json.loads(self.ctx.handler("memory_bridge_read")({"id": "projects/garden.md"}))
            else:
                results[i] = self.search()

        threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        for i, result in results.items():
            self.assertIs(result["ok"], True, self.reasons)
            if i % 2:
                self.assertEqual(result["id"], "projects/garden.md")
            else:
                self.assertEqual([h["id"] for h in result["results"]], ["projects/garden.md"])
        self.assertEqual(len(results), 8)

    def test_identity_in_arguments_is_an_unknown_argument(self):
        result = self.search({"query": "lantern", "home": "/etc"})
        self.assertEqual(result["error"]["code"], "invalid_request")

    def test_the_request_line_carries_the_caller_record(self):
        log = self.recording_worker()
        self.search({"query": "lantern", "limit": 3})
        request = json.loads(log.read_text().splitlines()[0])
        self.assertEqual(set(request), {"v", "id", "tool", "args", "caller"})
        self.assertEqual(request["v"], 1)
        self.assertEqual(request["tool"], "memory_bridge_search")
        self.assertEqual(request["args"], {"query": "lantern", "limit": 3})
        self.assertEqual(
            request["caller"], {"home": str(self.home), "cron": False, "subagent": False, "profile": "default"}
        )


    def test_the_caller_record_always_carries_a_profile_string(self):
        log = self.recording_worker()
        ctx = stub.StubContext(profile_name=None)
        self.shim.register(ctx)
        self.ctx = ctx
        self.search()
        caller = json.loads(log.read_text().splitlines()[0])["caller"]
        self.assertEqual(caller["profile"], "")

    def test_a_nameless_profile_is_served_by_the_real_worker(self):
        ctx = stub.StubContext(profile_name=None)
        self.shim.register(ctx)
        self.ctx = ctx
        self.assertIs(self.search()["ok"], True, self.reasons)


class RunKindTests(ShimTestCase):
    def test_cron_by_current_cron_execution_is_refused_without_allow_cron(self):
        self.ctx.cron_job = object()
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_cron_by_session_flag_is_refused_without_allow_cron(self):
        ctx = stub.StubContext(cron_helper=False)  # older Hermes: no current_cron_execution
        self.shim.register(ctx)
        self.ctx = ctx
        self.state.session_env["HERMES_CRON_SESSION"] = "1"
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_cron_by_either_signal_is_served_with_allow_cron(self):
        self.set_policy(self.home, _policy(self.notes, allow_cron=True))
        self.ctx.cron_job = object()
        self.assertIs(self.search()["ok"], True, self.reasons)
        self.ctx.cron_job = None
        self.state.session_env["HERMES_CRON_SESSION"] = "1"
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_cron_signal_is_sent_to_the_worker(self):
        log = self.recording_worker()
        self.state.session_env["HERMES_CRON_SESSION"] = "1"
        self.search()
        self.ctx.cron_job = object()
        self.state.session_env.clear()
        self.search()
        callers = [json.loads(line)["caller"] for line in log.read_text().splitlines()]
        self.assertEqual([(c["cron"], c["subagent"]) for c in callers], [(True, False), (True, False)])

    def test_subagent_is_refused_without_allow_subagents_and_served_with_it(self):
        self.state.delegated = True
        self.assertEqual(self.search(), UNAVAILABLE)
        self.set_policy(self.home, _policy(self.notes, allow_subagents=True))
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_a_subagent_of_a_cron_job_needs_both_opt_ins(self):
        self.state.delegated = True
        self.state.session_env["HERMES_CRON_SESSION"] = "1"
        self.set_policy(self.home, _policy(self.notes, allow_subagents=True))
        self.assertEqual(self.search(), UNAVAILABLE)
        self.set_policy(self.home, _policy(self.notes, allow_subagents=True, allow_cron=True))
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_an_unexpected_cron_flag_value_is_refused(self):
        self.set_policy(self.home, _policy(self.notes, allow_cron=True, allow_subagents=True))
        self.state.session_env["HERMES_CRON_SESSION"] = "yes"
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_a_non_boolean_delegation_signal_is_refused(self):
        self.state.delegated = "1"
        self.assertEqual(self.search(), UNAVAILABLE)


class HomeTests(ShimTestCase):
    def test_a_home_other_than_the_one_seen_at_registration_is_refused(self):
        other = self.make_home("other", _policy(self.notes))
        self.state.home = str(other)
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_a_single_profile_override_differing_from_registration_is_refused(self):
        other = self.make_home("other", _policy(self.notes))
        self.state.override = str(other)
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_multiplexed_gateway_without_a_bound_home_is_refused(self):
        self.state.multiplex = True
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_multiplexed_gateway_uses_the_bound_home(self):
        other = self.make_home("other", _policy(self.notes, allow=["decisions/**"]))
        self.state.multiplex = True
        self.state.override = str(other)
        result = self.search()
        self.assertEqual([h["id"] for h in result["results"]], ["decisions/watering.md"])

    def test_multiplexed_gateway_refuses_a_secret_scope_home_that_disagrees(self):
        other = self.make_home("other", _policy(self.notes))
        self.state.multiplex = True
        self.state.override = str(other)
        self.state.scope_home = str(self.home)
        stub.install(self.state)
        self.assertEqual(self.search(), UNAVAILABLE)
        self.state.scope_home = str(other)
        stub.install(self.state)
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_plugin_host_isolation_process_is_refused(self):
        os.environ["HERMES_PLUGIN_HOST_PROCESS"] = "1"
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_a_missing_hermes_module_is_refused(self):
        for module in ("agent.delegation_context", "gateway.session_context", "agent.secret_scope", "hermes_constants"):
            with self.subTest(module=module):
                self.state.missing_modules = {module}
                stub.install(self.state)
                self.assertEqual(self.search(), UNAVAILABLE)
        self.state.missing_modules = set()
        stub.install(self.state)
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_a_missing_helper_is_refused(self):
        self.state.missing_helpers = {"is_delegated_child_process_context"}
        stub.install(self.state)
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_registration_without_hermes_context_refuses_every_call(self):
        stub.uninstall()
        sys.modules["hermes_constants"] = None
        ctx = stub.StubContext()
        self.shim.register(ctx)
        stub.install(self.state)
        self.assertEqual(json.loads(ctx.handler("memory_bridge_search")({"query": "lantern"})), UNAVAILABLE)


class WorkerFailureTests(ShimTestCase):
    def test_a_worker_killed_between_calls_is_restarted(self):
        self.assertIs(self.search()["ok"], True, self.reasons)
        first = self.client()._worker.proc
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        self.assertIs(self.search()["ok"], True, self.reasons)
        self.assertNotEqual(self.client()._worker.proc.pid, first.pid)

    def test_a_worker_that_crashes_mid_call_gives_unavailable(self):
        self.use_fake_worker("import sys\nsys.stdin.readline()\nsys.exit(3)\n")
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertIsNone(self.client()._worker)

    def test_a_worker_that_never_answers_times_out_and_is_kept(self):
        self.use_fake_worker("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
        self.shim.CALL_TIMEOUT_SECONDS = 0.5
        self.assertEqual(self.search(), UNAVAILABLE)
        # A slow answer is not a broken worker: killing it would throw away a half-built index.
        worker = self.client()._worker
        self.assertIsNotNone(worker)
        self.assertTrue(worker.alive())

    def slow_first_reply_worker(self) -> Path:
        """A fake worker that answers its first request only once a release file exists (a cold index), with a
        result naming stale.md; every later request is answered at once with fresh.md."""
        release = self.tmp / "release"
        self.use_fake_worker(
            "import json, os, sys, time\n"
            "first = True\n"
            "for line in sys.stdin:\n"
            "    req = json.loads(line)\n"
            "    name = 'fresh.md'\n"
            "    if first:\n"
            f"        while not os.path.exists({str(release)!r}):\n"
            "            time.sleep(0.02)\n"
            "        first, name = False, 'stale.md'\n"
            "    hit = {'id': name, 'snippet': name}\n"
            "    out = {'v': 1, 'id': req['id'], 'result': {'ok': True, 'results': [hit], 'truncated': False}}\n"
            "    sys.stdout.write(json.dumps(out) + '\\n'); sys.stdout.flush()\n"
        )
        return release

    def test_a_late_reply_is_discarded_and_the_next_call_gets_its_own_answer_from_the_same_worker(self):
        release = self.slow_first_reply_worker()
        self.shim.CALL_TIMEOUT_SECONDS = 0.5
        self.assertEqual(self.search(), UNAVAILABLE)
        first = self.client()._worker.proc.pid
        release.touch()
        self.shim.CALL_TIMEOUT_SECONDS = 60.0
        result = self.search()
        self.assertEqual([h["id"] for h in result.get("results", [])], ["fresh.md"], self.reasons)
        self.assertEqual(self.client()._worker.proc.pid, first)
        # And again, once the stale reply is long gone.
        self.assertEqual([h["id"] for h in self.search()["results"]], ["fresh.md"])

    def test_a_late_reply_already_waiting_in_the_pipe_is_skipped(self):
        release = self.slow_first_reply_worker()
        self.shim.CALL_TIMEOUT_SECONDS = 0.5
        self.assertEqual(self.search(), UNAVAILABLE)
        release.touch()
        # Wait (without a deadline assertion) until the stale reply has been written into the pipe.
        worker = self.client()._worker
        import select

        select.select([worker.proc.stdout.fileno()], [], [], 30)
        self.shim.CALL_TIMEOUT_SECONDS = 60.0
        self.assertEqual([h["id"] for h in self.search()["results"]], ["fresh.md"], self.reasons)

    def test_a_worker_silent_beyond_the_stuck_limit_is_replaced(self):
        self.use_fake_worker("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
        self.shim.CALL_TIMEOUT_SECONDS = 0.5
        self.shim.STUCK_SECONDS = 0.0
        self.assertEqual(self.search(), UNAVAILABLE)
        stuck = self.client()._worker.proc
        self.recording_worker()
        self.shim.CALL_TIMEOUT_SECONDS = 60.0
        self.assertIs(self.search()["ok"], True, self.reasons)
        self.assertNotEqual(self.client()._worker.proc.pid, stuck.pid)
        self.assertIsNotNone(stuck.wait(timeout=10))

    def test_the_timeout_comes_from_the_environment(self):
        self.use_fake_worker("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
        self.shim.CALL_TIMEOUT_SECONDS = 3600.0
        os.environ["MEMORY_BRIDGE_TIMEOUT"] = "0.5"
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_the_timeout_comes_from_the_install_record(self):
        self.use_fake_worker("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
        record_path = self.home / "plugins" / "memory-bridge" / "install.json"
        record = json.loads(record_path.read_text())
        record["timeout_seconds"] = 0.5
        _write(record_path, json.dumps(record))
        self.shim.CALL_TIMEOUT_SECONDS = 3600.0
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_timeout_bounds_match_the_install_command(self):
        script = (
            f"import({json.dumps((REPO / 'dist' / 'src' / 'hermes' / 'install.js').as_uri())})"
            ".then(m => process.stdout.write(JSON.stringify([m.MIN_TIMEOUT_SECONDS, m.MAX_TIMEOUT_SECONDS])))"
        )
        done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
        self.assertEqual(json.loads(done.stdout), [self.shim.MIN_TIMEOUT_SECONDS, self.shim.MAX_TIMEOUT_SECONDS])

    def test_timeout_settings_are_bounded_and_bad_values_ignored(self):
        timeout = self.shim._timeout_seconds
        self.shim.CALL_TIMEOUT_SECONDS = 10.0
        self.assertEqual(timeout("0.001", None), self.shim.MIN_TIMEOUT_SECONDS)
        self.assertEqual(timeout("99999", None), self.shim.MAX_TIMEOUT_SECONDS)
        self.assertEqual(timeout("nan", None), 10.0)
        self.assertEqual(timeout("soon", 30), 30.0)
        self.assertEqual(timeout(None, True), 10.0)
        self.assertEqual(timeout(None, 42), 42.0)
        self.assertEqual(timeout("7", 42), 7.0)

    def test_garbage_and_mismatched_replies_give_unavailable(self):
        bodies = {
            "not json": "sys.stdout.write('not json\\n')",
            "wrong id": "sys.stdout.write(json.dumps({'v': 1, 'id': 'other', 'result': ok}) + '\\n')",
            "wrong v": "sys.stdout.write(json.dumps({'v': 2, 'id': req['id'], 'result': ok}) + '\\n')",
            "v as true": "sys.stdout.write(json.dumps({'v': True, 'id': req['id'], 'result': ok}) + '\\n')",
            "extra key": "sys.stdout.write(json.dumps({'v': 1, 'id': req['id'], 'result': dict(ok, extra=1)}) + '\\n')",
            "read shape for search": (
                "sys.stdout.write(json.dumps({'v': 1, 'id': req['id'], 'result': "
                "{'ok': True, 'id': 'a.md', 'content': 'x', 'truncated': False}}) + '\\n')"
            ),
            "invented error code": (
                "sys.stdout.write(json.dumps({'v': 1, 'id': req['id'], 'result': "
                "{'ok': False, 'error': {'code': 'denied', 'message': 'x'}}}) + '\\n')"
            ),
            "two lines": (
                "sys.stdout.write(json.dumps({'v': 1, 'id': req['id'], 'result': ok}) + '\\n' + 'more\\n')"
            ),
        }
        for label, reply in bodies.items():
            with self.subTest(reply=label):
                self.use_fake_worker(
                    "import json, sys, time\n"
                    "req = json.loads(sys.stdin.readline())\n"
                    "ok = {'ok': True, 'results': [], 'truncated': False}\n"
                    f"{reply}\n"
                    "sys.stdout.flush()\n"
                    "time.sleep(30)\n"
                )
                self.client().close()
                self.assertEqual(self.search(), UNAVAILABLE)
                self.assertIsNone(self.client()._worker)

    def test_a_missing_worker_program_gives_unavailable(self):
        record_path = self.home / "plugins" / "memory-bridge" / "install.json"
        record = json.loads(record_path.read_text())
        record["node"] = str(self.tmp / "no-such-node")
        _write(record_path, json.dumps(record))
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_a_writable_install_record_is_not_trusted(self):
        record_path = self.home / "plugins" / "memory-bridge" / "install.json"
        os.chmod(record_path, 0o666)
        self.assertEqual(self.search(), UNAVAILABLE)
        os.chmod(record_path, 0o600)
        self.assertIs(self.search()["ok"], True, self.reasons)


class ProgramTrustTests(ShimTestCase):
    def test_a_worker_program_in_a_group_writable_directory_is_not_started(self):
        log = self.recording_worker()
        script_dir = Path(json.loads((self.home / "plugins" / "memory-bridge" / "install.json").read_text())["cli"]).parent
        os.chmod(script_dir, 0o770)
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertIsNone(self.client()._worker)
        self.assertFalse(log.exists())
        os.chmod(script_dir, 0o700)
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_a_world_writable_worker_program_is_not_started(self):
        script = self.use_fake_worker("import sys\n")
        os.chmod(script, 0o606)
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertIsNone(self.client()._worker)

    def test_a_worker_program_owned_by_someone_else_is_not_started(self):
        if os.geteuid() != 0:
            self.skipTest("needs root to chown")
        script = self.use_fake_worker("import sys\n")
        os.chown(script, 65534, 65534)
        self.assertEqual(self.search(), UNAVAILABLE)


class NeverRaisesTests(ShimTestCase):
    def test_failing_hermes_helpers_give_unavailable_not_exceptions(self):
        for helper in ("get_hermes_home", "get_hermes_home_override", "is_multiplex_active",
                       "is_delegated_child_process_context", "get_session_env"):
            with self.subTest(helper=helper):
                self.state.raise_from = helper
                self.assertEqual(self.search(), UNAVAILABLE)
        self.state.raise_from = None
        self.ctx.cron_raises = True
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_arguments_that_are_not_json_give_invalid_request(self):
        result = self.search({"query": object()})
        self.assertEqual(result["error"]["code"], "invalid_request")
        self.assertEqual(self.search({"query": float("nan")})["error"]["code"], "invalid_request")

    def test_arguments_that_are_not_an_object_give_invalid_request(self):
        for args in (None, [], "lantern", 3):
            with self.subTest(args=args):
                raw = self.ctx.handler("memory_bridge_search")(args)
                self.assertEqual(json.loads(raw)["error"]["code"], "invalid_request")

    def test_an_oversized_request_gives_unavailable_without_reaching_the_worker(self):
        log = self.recording_worker()
        self.assertEqual(self.search({"query": "x" * (1 << 20)}), UNAVAILABLE)
        self.assertFalse(log.exists())


if __name__ == "__main__":
    unittest.main()
