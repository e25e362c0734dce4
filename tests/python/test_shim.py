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
# Environment variables a test may set; saved and cleared around every test.
_ENV_NAMES = (
    "HERMES_PLUGIN_HOST_PROCESS",
    "MEMORY_BRIDGE_TIMEOUT",
    "HERMES_CRON_SESSION",
    "HERMES_SESSION_PLATFORM",
    "MEMORY_BRIDGE_WARM_UP",
    stub.DELEGATED_CHILD_ENV_MARKER,
)


def setUpModule():
    if NODE is None:
        raise unittest.SkipTest("node is not on PATH; the shim tests need the built CLI")
    if not CLI.is_file():
        raise unittest.SkipTest(f"{CLI} is missing; run `npm run build` first")


class _Collector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []
        self.levels: dict[str, int] = {}

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())
        self.levels[record.getMessage()] = record.levelno

    def __str__(self) -> str:
        return "shim log: " + "; ".join(self.messages)

    def wait_for(self, text: str, seconds: float = 60.0) -> bool:
        """True once a message contains `text`. The worker's stderr lines reach the log through the shim's reader
        thread, after the call's answer, so a loaded machine may deliver them a moment later."""
        deadline = time.monotonic() + seconds
        while True:
            if any(text in m for m in list(self.messages)):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


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
        # The warm-up would start a worker behind each test's back; WarmUpTests turn it on.
        self.shim.WARM_UP_ON_REGISTER = False
        self.shim.register(self.ctx)
        # The shim's reason codes, shown when an assertion about a result fails.
        self.reasons = _Collector()
        logger = logging.getLogger("memory_bridge")
        logger.addHandler(self.reasons)
        logger.setLevel(logging.INFO)  # also the worker's stderr lines
        self.saved_env = {k: os.environ.get(k) for k in _ENV_NAMES}
        for k in _ENV_NAMES:
            os.environ.pop(k, None)

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

    def api_report_path(self) -> Path:
        return self.home / "plugins" / "memory-bridge" / "hermes-api.json"


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
        listed = stub.parse_manifest(text)["provides_tools"]
        self.assertEqual(listed, [r["name"] for r in self.ctx.registrations])
        version = json.loads((REPO / "package.json").read_text())["version"]
        self.assertIn(f"\nversion: {version}\n", text)
        self.assertIn("\nname: memory-bridge\n", text)
        self.assertIn("\nkind: standalone\n", text)

    def test_registering_with_the_warm_up_off_starts_no_worker(self):
        self.assertIsNone(self.client()._worker)


class WarmUpTests(ShimTestCase):
    """The warm first call (docs/HERMES.md, "Warm first call"): register() starts the worker and the view's build."""

    def view_state(self) -> Path:
        return self.home / "plugins" / "memory-bridge" / "view.json"

    def register_warm(self, **env) -> None:
        os.environ.update(env)
        self.shim.WARM_UP_ON_REGISTER = True
        self.ctx = stub.StubContext(profile_name="default")
        self.shim.register(self.ctx)

    def wait_for_state(self, state: str, seconds: float = 120.0) -> dict:
        deadline = time.monotonic() + seconds
        while True:
            try:
                record = json.loads(self.view_state().read_text())
                if record["state"] == state:
                    return record
            except (OSError, ValueError):
                pass
            if time.monotonic() >= deadline:
                self.fail(f"view.json never said {state}; {self.reasons}")
            time.sleep(0.02)

    def test_registering_starts_the_worker_and_builds_the_view(self):
        self.register_warm()
        record = self.wait_for_state("warm")
        worker = self.client()._worker
        self.assertIsNotNone(worker)
        self.assertEqual(record["pid"], worker.proc.pid)
        self.assertEqual(record["notes"], 1)  # projects/garden.md: the private note is denied
        self.assertEqual(os.stat(self.view_state()).st_mode & 0o777, 0o600)
        # The first call is served by that worker, from that view: no second worker (so no second program check).
        result = self.search()
        self.assertEqual([h["id"] for h in result["results"]], ["projects/garden.md"], self.reasons)
        self.assertIs(self.client()._worker, worker)
        done = subprocess.run([NODE, str(CLI), "status", "--home", str(self.home)], capture_output=True, text=True)
        self.assertIn(f"View:          warm: 1 notes, built at {record['finished_at']}", done.stdout, done.stderr)
        doctor = subprocess.run([NODE, str(CLI), "doctor", "--home", str(self.home)], capture_output=True, text=True)
        self.assertIn("[ok  ] view", doctor.stdout)
        self.assertNotIn("view_cold", doctor.stdout)

    def test_a_call_right_after_registering_waits_for_the_warm_up_in_the_same_worker(self):
        self.register_warm()
        result = self.search()  # sent while the warm-up is starting or building
        self.assertEqual([h["id"] for h in result["results"]], ["projects/garden.md"], self.reasons)
        # The worker answered the warm-up first (its reply is dropped by id), then this call: one worker for both.
        self.assertTrue(self.reasons.wait_for("dropped a late reply"), self.reasons)
        record = self.wait_for_state("warm")
        self.assertEqual(record["pid"], self.client()._worker.proc.pid)

    def test_the_environment_can_turn_the_warm_up_off(self):
        self.register_warm(MEMORY_BRIDGE_WARM_UP="0")
        # Decided before any thread starts: nothing to wait for.
        self.assertIsNone(self.client()._worker)
        self.assertFalse(self.view_state().exists())

    def test_a_refused_warm_up_is_recorded_and_status_says_the_view_is_not_warm(self):
        (self.home / "plugin-data" / "memory-bridge" / "policy.json").unlink()
        self.register_warm()
        record = self.wait_for_state("refused")
        self.assertEqual(record["reason"], "policy_missing")
        self.assertIsNone(record["notes"])
        done = subprocess.run([NODE, str(CLI), "status", "--home", str(self.home)], capture_output=True, text=True)
        self.assertIn("View:          not warm: the warm-up of", done.stdout)
        self.assertIn("was refused (policy_missing)", done.stdout)

    def test_a_refused_caller_gets_no_warm_up(self):
        self.state.multiplex = True  # a multiplexed gateway with no home bound: no caller can be named
        self.register_warm()
        # The worker refuses the warm-up as it would a call, so nothing is built and no view is recorded.
        self.assertTrue(self.reasons.wait_for("warm_up multiplex_unbound"), self.reasons)
        self.assertFalse(self.view_state().exists())
        # The worker's refusal reaches Hermes's log as a warning, as the shim's own refusals did.
        line = next(m for m in self.reasons.messages if "warm_up multiplex_unbound" in m)
        self.assertEqual(self.reasons.levels[line], logging.WARNING, self.reasons)


class InteractiveCallTests(ShimTestCase):
    def test_search_returns_allowed_notes_through_the_real_worker(self):
        result = self.search()
        self.assertIs(result["ok"], True, self.reasons)
        ids = [hit["id"] for hit in result["results"]]
        self.assertEqual(ids, ["projects/garden.md"])
        self.assertEqual(set(result), {"ok", "results", "truncated"})

    def test_a_cut_scan_reaches_the_model_as_incomplete(self):
        self.set_policy(self.home, _policy(self.notes, allow=["**"], limits={"max_entries": 1}))
        result = self.search()
        self.assertIs(result["ok"], True, self.reasons)
        self.assertEqual(set(result), {"ok", "results", "truncated", "incomplete"})
        self.assertIs(result["incomplete"], True)
        self.assertIs(result["truncated"], True)

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

    def test_the_request_line_carries_hermes_signals_and_the_worker_names_the_caller(self):
        log = self.recording_worker()
        self.search({"query": "lantern", "limit": 3})
        request = json.loads(log.read_text().splitlines()[0])
        self.assertEqual(set(request), {"v", "id", "tool", "args", "hermes"})
        self.assertEqual(request["v"], 1)
        self.assertEqual(request["tool"], "memory_bridge_search")
        self.assertEqual(request["args"], {"query": "lantern", "limit": 3})
        self.assertEqual(request["hermes"], {
            "plugin_host": "", "home": str(self.home), "registered_home": str(self.home), "override": None,
            "multiplex": False, "subagent": False, "cron_flag": "", "platform": "", "cron_execution": False,
            "parent_cron_execution": False, "profile_name": "default"})  # fmt: skip
        self.assertEqual(_decide([request["hermes"]]), [
            {"ok": True, "caller": {"home": str(self.home), "cron": False, "subagent": False, "profile": "default"}}])

    def test_a_nameless_profile_is_sent_as_none_and_the_caller_names_none(self):
        log = self.recording_worker()
        ctx = stub.StubContext(profile_name=None)
        self.shim.register(ctx)
        self.ctx = ctx
        self.search()
        signals = json.loads(log.read_text().splitlines()[0])["hermes"]
        self.assertIsNone(signals["profile_name"])
        self.assertNotIn("profile", _decide([signals])[0]["caller"])

    def test_a_nameless_profile_is_served_by_the_real_worker(self):
        ctx = stub.StubContext(profile_name=None)
        self.shim.register(ctx)
        self.ctx = ctx
        self.assertIs(self.search()["ok"], True, self.reasons)


class RunKindTests(ShimTestCase):
    """Cron detection uses every signal Hermes gives (docs/HERMES.md, "Cron and subagents"); each alone is enough."""

    def callers(self, log: Path) -> list[tuple[bool, bool]]:
        """(cron, subagent) as the worker decides them from the signals the shim sent."""
        decided = _decide([json.loads(line)["hermes"] for line in log.read_text().splitlines()])
        return [(d["caller"]["cron"], d["caller"]["subagent"]) if d["ok"] else d["reason"] for d in decided]

    def test_each_cron_signal_alone_marks_the_call_as_cron(self):
        log = self.recording_worker()
        with stub.session(HERMES_CRON_SESSION="1"):
            self.search()
        with stub.cron_execution():
            self.search()
        with stub.session(HERMES_SESSION_PLATFORM="cron"):
            self.search()
        self.search()  # none of them
        with stub.session(HERMES_SESSION_PLATFORM="telegram", HERMES_CRON_SESSION="0"):
            self.search()
        self.assertEqual(self.callers(log), [(True, False), (True, False), (True, False), (False, False), (False, False)])

    def test_the_session_flag_alone_counts_where_hermes_has_no_current_cron_execution(self):
        log = self.recording_worker()
        ctx = stub.StubContext(cron_helper=False)  # Hermes releases before ctx.current_cron_execution
        self.shim.register(ctx)
        self.ctx = ctx
        with stub.session(HERMES_CRON_SESSION="1"):
            self.search()
        with stub.session(HERMES_SESSION_PLATFORM="cron"):
            self.search()
        self.assertEqual(self.callers(log), [(True, False), (True, False)])

    def test_the_session_flag_from_the_process_environment_counts(self):
        log = self.recording_worker()
        os.environ["HERMES_CRON_SESSION"] = "1"
        self.search()
        self.assertEqual(self.callers(log), [(True, False)])

    def test_a_subagent_of_a_cron_job_is_cron_by_the_parents_execution_alone(self):
        # Inside a delegated child Hermes answers current_cron_execution() with None; the parent's view says cron.
        log = self.recording_worker()
        with stub.cron_execution():
            with stub.delegated_child():
                self.assertIsNone(self.ctx.current_cron_execution())
                self.search()
            self.assertIsNotNone(self.ctx.current_cron_execution())  # the probe changed nothing outside the copy
        with stub.delegated_child():
            self.search()  # a subagent outside any cron job
        self.assertEqual(self.callers(log), [(True, True), (False, True)])

    def test_a_subagent_of_a_cron_job_is_cron_by_each_session_signal_alone(self):
        log = self.recording_worker()
        with stub.delegated_child():
            with stub.session(HERMES_CRON_SESSION="1"):
                self.search()
            with stub.session(HERMES_SESSION_PLATFORM="cron"):
                self.search()
        self.assertEqual(self.callers(log), [(True, True), (True, True)])

    def test_without_the_child_marker_the_parents_view_is_an_absent_signal(self):
        self.state.child_marker = False
        stub.install(self.state)
        self.ctx = stub.StubContext()
        self.shim.register(self.ctx)
        log = self.recording_worker()
        with stub.cron_execution(), stub.delegated_child():
            self.search()
        self.assertEqual(self.callers(log), [(False, True)])
        self.assertIs(json.loads(self.api_report_path().read_text())["optional"]["parent_cron_view"], False)

    def test_a_cron_started_subagent_needs_both_opt_ins(self):
        for label, signal in (
            ("parent execution", lambda: stub.cron_execution()),
            ("session flag", lambda: stub.session(HERMES_CRON_SESSION="1")),
            ("platform", lambda: stub.session(HERMES_SESSION_PLATFORM="cron")),
        ):
            with self.subTest(signal=label):
                self.set_policy(self.home, _policy(self.notes, allow_subagents=True))
                with signal(), stub.delegated_child():
                    self.assertEqual(self.search(), UNAVAILABLE)
                self.set_policy(self.home, _policy(self.notes, allow_cron=True))
                with signal(), stub.delegated_child():
                    self.assertEqual(self.search(), UNAVAILABLE)
                self.set_policy(self.home, _policy(self.notes, allow_subagents=True, allow_cron=True))
                with signal(), stub.delegated_child():
                    self.assertIs(self.search()["ok"], True, self.reasons)

    def test_cron_is_refused_without_allow_cron_and_served_with_it(self):
        with stub.cron_execution():
            self.assertEqual(self.search(), UNAVAILABLE)
        self.set_policy(self.home, _policy(self.notes, allow_cron=True))
        with stub.cron_execution():
            self.assertIs(self.search()["ok"], True, self.reasons)

    def test_subagent_is_refused_without_allow_subagents_and_served_with_it(self):
        with stub.delegated_child():
            self.assertEqual(self.search(), UNAVAILABLE)
        os.environ[stub.DELEGATED_CHILD_ENV_MARKER] = "1"  # a child process of a delegated subagent
        self.assertEqual(self.search(), UNAVAILABLE)
        self.set_policy(self.home, _policy(self.notes, allow_subagents=True))
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_the_cron_flag_is_read_the_way_hermes_reads_it(self):
        # Hermes's approval code takes "1", "true", "yes", "on" (any case, spaces around) as cron, and some releases
        # bind the flag as a bool; "", "0", "false", "no", "off" and False are not cron.
        log = self.recording_worker()
        cron_values = ("1", "true", " Yes ", "ON", True)
        plain_values = ("", "0", "false", "No", " off ", False)
        for value in cron_values + plain_values:
            with stub.session(HERMES_CRON_SESSION=value):
                self.assertIs(self.search()["ok"], True, self.reasons)
        self.assertEqual(self.callers(log), [(True, False)] * len(cron_values) + [(False, False)] * len(plain_values))

    def test_a_cron_flag_bound_as_a_bool_is_served_by_the_opt_in(self):
        with stub.session(HERMES_CRON_SESSION=True):
            self.assertEqual(self.search(), UNAVAILABLE)
        self.assertTrue(self.reasons.wait_for("cron_refused"), str(self.reasons))
        with stub.session(HERMES_CRON_SESSION=False):
            self.assertIs(self.search()["ok"], True, self.reasons)
        self.set_policy(self.home, _policy(self.notes, allow_cron=True))
        with stub.session(HERMES_CRON_SESSION=True):
            self.assertIs(self.search()["ok"], True, self.reasons)

    def test_an_unexpected_cron_flag_value_is_refused(self):
        self.set_policy(self.home, _policy(self.notes, allow_cron=True, allow_subagents=True))
        for value in ("maybe", "2", 1, ["1"]):
            with self.subTest(value=value), stub.session(HERMES_CRON_SESSION=value):
                self.assertEqual(self.search(), UNAVAILABLE)
        self.assertIn("context_signal_conflict", str(self.reasons))

    def test_a_non_boolean_delegation_signal_is_refused(self):
        sys.modules["agent.delegation_context"].is_delegated_child_process_context = lambda: "1"
        self.assertEqual(self.search(), UNAVAILABLE)

    def test_a_cron_helper_that_is_not_callable_is_refused(self):
        self.ctx.current_cron_execution = "yes"
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
        # Hermes's log says the reason and what to do (the worker's line, src/remedies.ts), never a path.
        self.assertTrue(self.reasons.wait_for("memory_bridge_search plugin_host_process → "), self.reasons)
        self.assertNotIn(str(self.tmp), str(self.reasons))

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

    def test_a_missing_context_module_at_registration_registers_nothing(self):
        stub.uninstall()
        sys.modules["hermes_constants"] = None
        ctx = stub.StubContext()
        self.shim.register(ctx)
        stub.install(self.state)
        self.assertEqual(ctx.registrations, [])
        self.assertIn("module hermes_constants", str(self.reasons))

    def test_a_relative_hermes_home_is_refused_and_named(self):
        # At call time: HERMES_HOME became relative after registration.
        self.state.home = "relative/home"
        self.assertEqual(self.search(), UNAVAILABLE)
        # The worker decides and logs the reason with its remedy (src/remedies.ts); the shim passes the line on.
        self.assertTrue(self.reasons.wait_for("memory_bridge_search home_relative → "), self.reasons)
        self.assertNotIn("home_mismatch", str(self.reasons))
        self.assertNotIn("bad_home", str(self.reasons))

    def test_a_relative_hermes_home_at_registration_is_named_on_every_call(self):
        self.state.home = "relative/home"
        ctx = stub.StubContext()
        self.shim.register(ctx)
        self.ctx = ctx
        self.assertEqual(json.loads(self.api_report_path().read_text())["home"], "relative/home")
        self.assertEqual(_api_home_problem(self.home / "plugins" / "memory-bridge"), "home_relative")
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertTrue(self.reasons.wait_for("home_relative"), self.reasons)
        self.assertNotIn("home_mismatch", str(self.reasons))

    def test_a_home_reached_through_a_symlink_is_refused_and_named(self):
        link = self.tmp / "linked-home"
        link.symlink_to(self.home)
        # Registered through the link: every call names the link.
        self.state.home = str(link)
        ctx = stub.StubContext()
        self.shim.register(ctx)
        self.ctx = ctx
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertTrue(self.reasons.wait_for("memory_bridge_search home_symlink → "), self.reasons)
        self.assertNotIn("home_mismatch", str(self.reasons))
        self.assertNotIn(str(self.tmp), str(self.reasons))  # the operator log carries no path
        self.assertEqual(_api_home_problem(self.home / "plugins" / "memory-bridge"), "home_symlink")

    def test_a_linked_directory_above_the_home_is_named_too(self):
        real = _mkdir(self.tmp / "real-parent")
        os.rename(self.home, real / "home")
        (self.tmp / "home").symlink_to(real / "home")  # where the loaded shim still finds its own files
        (self.tmp / "linked").symlink_to(real)
        self.state.home = str(self.tmp / "linked" / "home")
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertTrue(self.reasons.wait_for("home_symlink"), self.reasons)

    def test_a_multiplexed_home_bound_through_a_symlink_is_named(self):
        link = self.tmp / "linked-home"
        link.symlink_to(self.home)
        self.state.multiplex = True
        self.state.override = str(link)
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertTrue(self.reasons.wait_for("home_symlink"), self.reasons)


class HermesApiTests(ShimTestCase):
    """register() probes the Hermes API it needs (docs/HERMES.md, "Hermes API probe")."""

    def fresh_register(self, ctx) -> list[str]:
        warnings = _Collector()
        logger = logging.getLogger("memory_bridge")
        logger.addHandler(warnings)
        try:
            self.shim.register(ctx)
        finally:
            logger.removeHandler(warnings)
        return [m for m in warnings.messages if "not registered" in m]

    def test_registration_records_what_it_found(self):
        path = self.api_report_path()
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600)
        report = json.loads(path.read_text())
        self.assertEqual(report["v"], 2)
        self.assertIs(report["registered"], True)
        self.assertIs(report["register_tool"], True)
        self.assertEqual(report["missing"], [])
        self.assertTrue(all(report["helpers"].values()))
        self.assertEqual(report["hermes_version"], "0.21.3")
        self.assertEqual(
            report["optional"],
            {
                "ctx.current_cron_execution": True,
                "parent_cron_view": True,
                "agent.secret_scope.current_secret_scope_home": False,
                "ctx.profile_name": True,
            },
        )
        self.assertEqual(report["home"], str(self.home))
        self.assertIsNone(_api_home_problem(self.home / "plugins" / "memory-bridge"))

    def test_a_missing_module_registers_nothing_with_one_warning_naming_it(self):
        for module in ("hermes_constants", "agent.secret_scope", "agent.delegation_context", "gateway.session_context"):
            with self.subTest(module=module):
                self.state.missing_modules = {module}
                stub.install(self.state)
                ctx = stub.StubContext()
                warnings = self.fresh_register(ctx)
                self.assertEqual(ctx.registrations, [])
                self.assertEqual(len(warnings), 1, warnings)
                self.assertIn(f"module {module}", warnings[0])
                report = json.loads(self.api_report_path().read_text())
                self.assertIs(report["registered"], False)
                self.assertIn(f"module {module}", report["missing"])

    def test_a_missing_helper_registers_nothing_naming_it(self):
        self.state.missing_helpers = {"is_delegated_child_process_context"}
        stub.install(self.state)
        ctx = stub.StubContext()
        warnings = self.fresh_register(ctx)
        self.assertEqual(ctx.registrations, [])
        self.assertEqual(len(warnings), 1)
        self.assertIn("agent.delegation_context.is_delegated_child_process_context", warnings[0])

    def test_a_register_tool_missing_a_keyword_registers_nothing(self):
        class OldContext(stub.StubContext):
            def register_tool(self, name, toolset, schema, handler, check_fn=None):  # no description keyword
                raise AssertionError("must not be called")

        ctx = OldContext()
        warnings = self.fresh_register(ctx)
        self.assertEqual(len(warnings), 1)
        # Python's own signature check (inspect.signature(...).bind) words what does not fit.
        self.assertIn("ctx.register_tool: got an unexpected keyword argument 'description'", warnings[0])

    def test_a_register_tool_requiring_more_registers_nothing(self):
        class StricterContext(stub.StubContext):
            def register_tool(self, name, toolset, schema, handler, description, scope):
                raise AssertionError("must not be called")

        warnings = self.fresh_register(StricterContext())
        self.assertEqual(len(warnings), 1)
        self.assertIn("ctx.register_tool: missing a required argument: 'scope'", warnings[0])

    def test_a_context_without_register_tool_registers_nothing(self):
        warnings = self.fresh_register(object())
        self.assertEqual(len(warnings), 1)
        self.assertIn("ctx.register_tool", warnings[0])

    def test_a_register_tool_taking_any_keywords_is_used(self):
        class KeywordContext(stub.StubContext):
            def register_tool(self, name, toolset, schema, handler, **extra):
                return super().register_tool(name, toolset, schema, handler, **extra)

        ctx = KeywordContext()
        self.assertEqual(self.fresh_register(ctx), [])
        self.assertEqual([r["name"] for r in ctx.registrations], ["memory_bridge_search", "memory_bridge_read"])

    def test_hermes_dispatch_gets_a_json_string_and_passes_keyword_arguments(self):
        raw = self.ctx.dispatch("memory_bridge_search", {"query": "lantern"}, task_id="t-1", parent_agent=object())
        self.assertIsInstance(raw, str)
        self.assertEqual([h["id"] for h in json.loads(raw)["results"]], ["projects/garden.md"], self.reasons)
        # A refusal is still a string for the registry, never its "Tool execution failed" wrapper.
        self.state.raise_from = "get_hermes_home"
        self.assertEqual(json.loads(self.ctx.dispatch("memory_bridge_read", {"id": "x.md"}, task_id="t-2")), UNAVAILABLE)

    def test_status_and_doctor_say_which_hermes_api_the_shim_found(self):
        for command in ("status", "doctor"):
            with self.subTest(command=command):
                done = subprocess.run(
                    [NODE, str(CLI), command, "--home", str(self.home)], capture_output=True, text=True
                )
                self.assertIn("Hermes API" if command == "status" else "[ok  ] hermes_api", done.stdout, done.stderr)
                self.assertIn("Hermes 0.21.3", done.stdout)
                self.assertIn("register_tool: found", done.stdout)
                self.assertIn("current_cron_execution: found", done.stdout)

    def test_status_and_doctor_name_what_is_missing(self):
        self.state.missing_modules = {"gateway.session_context"}
        stub.install(self.state)
        self.fresh_register(stub.StubContext())
        done = subprocess.run([NODE, str(CLI), "doctor", "--home", str(self.home)], capture_output=True, text=True)
        self.assertIn("module gateway.session_context", done.stdout)
        self.assertIn("hermes_api_missing", done.stdout)
        self.assertNotEqual(done.returncode, 0)


class ManifestTests(ShimTestCase):
    """plugin.yaml through a loader that applies Hermes's requires_hermes gate (docs/HERMES.md, "Manifest")."""

    def plugin_dir(self) -> Path:
        return self.home / "plugins" / "memory-bridge"

    def test_hermes_loads_the_plugin_at_every_version(self):
        # 0.21.3 is the newest release; source checkouts without an install stamp report 0.0.0.
        for version in ("0.21.3", "0.21.4", "0.22.7", "0.30.0", "1.0.0", "0.0.0"):
            with self.subTest(version=version):
                self.state.version = version
                ctx = stub.StubContext()
                loaded = stub.load_plugin(self.plugin_dir(), self.state, ctx, f"mb_manifest_{next(_counter)}")
                self.assertIsNone(loaded.error)
                self.assertEqual(loaded.tools_registered, ["memory_bridge_search", "memory_bridge_read"])
                self.assertEqual(loaded.tools_registered, loaded.manifest["provides_tools"])
                try:
                    if version in ("0.21.3", "0.0.0"):
                        # And the tools work: a search dispatched the way Hermes's agent loop does reaches the worker.
                        loaded.module.CALL_TIMEOUT_SECONDS = 120.0  # a loaded test machine can be slow to start node
                        raw = ctx.dispatch("memory_bridge_search", {"query": "lantern"}, task_id="t-1")
                        self.assertEqual([h["id"] for h in json.loads(raw)["results"]], ["projects/garden.md"], raw)
                finally:
                    loaded.module._close_all()  # and the worker its warm-up started

    def test_the_gate_in_the_stub_loader_would_skip_a_floor(self):
        # The check is real: the floor this manifest once had makes the same loader skip it.
        floored = _mkdir(self.tmp / "floored")
        shutil.copy(self.plugin_dir() / "__init__.py", floored / "__init__.py")
        shutil.copy(self.plugin_dir() / "tools.json", floored / "tools.json")
        text = (self.plugin_dir() / "plugin.yaml").read_text()
        (floored / "plugin.yaml").write_text(text.replace("manifest_version: 1\n", 'manifest_version: 1\nrequires_hermes: ">=0.22.7"\n'))
        for version, skipped in (("0.21.3", True), ("0.0.0", True), ("0.22.7", False)):
            with self.subTest(version=version):
                self.state.version = version
                ctx = stub.StubContext()
                loaded = stub.load_plugin(floored, self.state, ctx, f"mb_floored_{next(_counter)}")
                if skipped:
                    self.assertEqual(loaded.error, f"requires hermes >=0.22.7, running {version}")
                    self.assertEqual(ctx.registrations, [])
                else:
                    self.assertIsNone(loaded.error)

    def test_the_manifest_declares_no_hermes_version_requirement(self):
        manifest = stub.parse_manifest((REPO / "plugin" / "plugin.yaml").read_text())
        self.assertNotIn("requires_hermes", manifest)
        self.assertEqual(manifest["manifest_version"], 1)


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
            "result not an object": "sys.stdout.write(json.dumps({'v': 1, 'id': req['id'], 'result': [ok]}) + '\\n')",
            "result without ok": "sys.stdout.write(json.dumps({'v': 1, 'id': req['id'], 'result': {'results': []}}) + '\\n')",
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


def _fake_package(base: Path, owner: int | None = None) -> tuple[Path, Path]:
    """A package tree as Node would load it for the worker: dist/src/cli/main.js, dist/src/tools/read.js,
    node_modules/dep/index.js and package.json, directories 0755 and files 0644 (owned by ``owner`` when given)."""
    pkg = base / "pkg"
    for rel in ("dist/src/cli/main.js", "dist/src/tools/read.js", "node_modules/dep/index.js", "package.json"):
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("// stand-in\n")
    for path in [pkg, *pkg.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
        if owner is not None:
            os.chown(path, owner, owner)
    return pkg, pkg / "dist" / "src" / "cli" / "main.js"


# Spoilers for a fake package: (label, change, the reason the shim logs). Each makes one object Node would load
# writable by someone else.
_SPOILERS = (
    ("world-writable dist/src/tools/read.js", lambda pkg: os.chmod(pkg / "dist/src/tools/read.js", 0o646), "world_writable"),
    ("group-writable dependency file", lambda pkg: os.chmod(pkg / "node_modules/dep/index.js", 0o664), "group_writable"),
    ("world-writable dependency directory", lambda pkg: os.chmod(pkg / "node_modules/dep", 0o757), "world_writable"),
    ("world-writable package.json", lambda pkg: os.chmod(pkg / "package.json", 0o646), "world_writable"),
    ("group-writable dist", lambda pkg: os.chmod(pkg / "dist", 0o775), "group_writable"),
    ("dependency owned by another user", lambda pkg: os.chown(pkg / "node_modules/dep/index.js", 12345, 12345), "untrusted_owner"),
)

# The launch gate (src/hermes/launch.ts), which judges the package trees before the worker's code loads.
GATE = REPO / "dist" / "src" / "hermes" / "launch.js"


def _decide(records: list[dict]) -> list[dict]:
    """The worker's decision (src/hermes/caller.ts ``callerFromSignals``) on each ``hermes`` record the shim sent."""
    script = (f"import({json.dumps((REPO / 'dist' / 'src' / 'hermes' / 'caller.js').as_uri())}).then(m => {{"
              "let s = ''; process.stdin.on('data', (d) => { s += d; }); process.stdin.on('end', () => "
              "process.stdout.write(JSON.stringify(JSON.parse(s).map((r) => m.callerFromSignals(r))))); })")
    done = subprocess.run([NODE, "--input-type=module", "-e", script], input=json.dumps(records),
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(done.stdout)


def _api_home_problem(home: Path) -> str | None:
    """What status and doctor say of the home hermes-api.json recorded (src/hermes/api-report.ts)."""
    script = (f"import({json.dumps((REPO / 'dist' / 'src' / 'hermes' / 'api-report.js').as_uri())})"
              f".then(m => process.stdout.write(JSON.stringify(m.readApiReport({json.dumps(str(home))}))))")
    done = subprocess.run([NODE, "--input-type=module", "-e", script], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["report"]["homeProblem"]


def _gate_verdict(cli: Path, prefix: tuple = (), gate: Path = GATE) -> dict:
    """The gate's verdict on the package of ``cli``, as ``launch.js --check`` prints it (``prefix``: setpriv …)."""
    done = subprocess.run([*prefix, NODE, str(gate), "--check", str(cli)], capture_output=True, text=True,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


class ProgramTrustTests(ShimTestCase):
    """The worker's code is trusted like notes (docs/HERMES.md, "Worker program trust")."""

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

    def copied_package(self) -> Path:
        """The built package copied into the test tree (dist/ and package.json copied, node_modules linked to the
        repository's own), with install.json pointing at the copy's CLI. Returns the copy's directory."""
        pkg = _mkdir(self.tmp / "pkg")
        shutil.copytree(REPO / "dist", pkg / "dist")
        shutil.copy(REPO / "package.json", pkg / "package.json")
        (pkg / "node_modules").symlink_to(REPO / "node_modules")
        for path in [pkg, *pkg.rglob("*")]:
            if not path.is_symlink():
                os.chmod(path, 0o755 if path.is_dir() else 0o644)
        record_path = self.home / "plugins" / "memory-bridge" / "install.json"
        record = json.loads(record_path.read_text())
        record["cli"] = str(pkg / "dist" / "src" / "cli" / "main.js")
        _write(record_path, json.dumps(record))
        return pkg

    def test_a_world_writable_module_of_the_worker_is_refused_before_the_worker_starts(self):
        pkg = self.copied_package()
        module = pkg / "dist" / "src" / "tools" / "read.js"
        os.chmod(module, 0o646)
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertIsNone(self.client()._worker)
        self.assertTrue(self.reasons.wait_for("worker program refused: world_writable"), self.reasons)
        self.assertIn("refused: worker_program_untrusted", str(self.reasons))
        # doctor names the file (operator output may carry paths).
        done = subprocess.run([NODE, str(CLI), "doctor", "--home", str(self.home)], capture_output=True, text=True)
        self.assertIn(f"not trusted: {module} (world_writable:", done.stdout)
        self.assertNotEqual(done.returncode, 0)
        os.chmod(module, 0o644)
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_a_new_registration_judges_every_file_again(self):
        # Only a file's owner (this user or root) can change its mode, which moves no directory: such a change made
        # after a passing verdict is seen when Hermes loads the plugin again (and by doctor at once).
        pkg = self.copied_package()
        self.assertIs(self.search()["ok"], True, self.reasons)
        self.shim._close_all()
        os.chmod(pkg / "dist" / "src" / "tools" / "read.js", 0o646)
        self.ctx = stub.StubContext()
        self.shim.register(self.ctx)
        self.assertEqual(self.search(), UNAVAILABLE)
        self.assertIsNone(self.client()._worker)

    def test_every_start_judges_the_package_again(self):
        pkg = self.copied_package()
        self.assertIs(self.search()["ok"], True, self.reasons)
        self.client().close()
        planted = pkg / "dist" / "src" / "tools" / "planted.js"
        planted.write_text("// planted\n")
        os.chmod(planted, 0o666)
        self.assertEqual(self.search(), UNAVAILABLE)
        planted.unlink()
        self.assertIs(self.search()["ok"], True, self.reasons)

    def test_the_tree_rule_as_root(self):
        if os.geteuid() != 0:
            self.skipTest("the same cases run as the current user in test_the_tree_rule_as_an_unprivileged_user")
        for label, spoil, why in _SPOILERS:
            with self.subTest(case=label):
                base = _mkdir(self.tmp / f"as-root-{next(_counter)}")
                pkg, cli = _fake_package(base)
                self.assertEqual(_gate_verdict(cli), {"ok": True})
                spoil(pkg)
                verdict = _gate_verdict(cli)
                self.assertIs(verdict["ok"], False)
                self.assertEqual(verdict["why"], why)

    def test_the_tree_rule_as_an_unprivileged_user(self):
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            self.skipTest("needs root and setpriv to switch to uid 65534")
        uid = 65534
        probe = subprocess.run(
            ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", NODE, "--version"],
            capture_output=True, text=True, cwd="/",
        )
        if probe.returncode != 0:
            self.skipTest("the node binary is not reachable by uid 65534 here")
        base = Path(tempfile.mkdtemp(prefix="mb-shim-unpriv-"))
        try:
            os.chmod(base, 0o755)
            gate_copy = base / "launch.js"  # the gate imports only Node's built-ins: a copy of the one file runs
            shutil.copy(GATE, gate_copy)
            os.chmod(gate_copy, 0o644)

            def judge(cli: Path) -> dict:
                return _gate_verdict(cli, ("setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"), gate_copy)

            for label, spoil, why in (*_SPOILERS, ("a root-owned file is trusted", None, None)):
                with self.subTest(case=label):
                    case = base / f"case-{next(_counter)}"
                    case.mkdir()
                    os.chmod(case, 0o755)
                    pkg, cli = _fake_package(case, owner=uid)
                    self.assertEqual(judge(cli), {"ok": True})
                    if spoil is None:
                        os.chown(pkg / "dist/src/tools/read.js", 0, 0)
                        self.assertEqual(judge(cli), {"ok": True})
                        continue
                    spoil(pkg)
                    verdict = judge(cli)
                    self.assertIs(verdict["ok"], False)
                    self.assertEqual(verdict["why"], why)
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def test_doctor_as_an_unprivileged_user_names_a_writable_module(self):
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            self.skipTest("needs root and setpriv to switch to uid 65534")
        uid = 65534
        base = Path(tempfile.mkdtemp(prefix="mb-doctor-unpriv-"))
        try:
            os.chmod(base, 0o755)

            def as_user(*argv: str) -> subprocess.CompletedProcess:
                return subprocess.run(
                    ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv],
                    capture_output=True, text=True, cwd=base,
                    env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(base)},
                )

            probe = as_user(NODE, "-e", f"require('fs').accessSync({json.dumps(str(REPO / 'node_modules' / 'zod'))})")
            if probe.returncode != 0:
                self.skipTest("the repository's node_modules is not readable by uid 65534 here")
            pkg = base / "pkg"
            shutil.copytree(REPO / "dist", pkg / "dist")
            shutil.copy(REPO / "package.json", pkg / "package.json")
            shutil.copytree(REPO / "plugin", pkg / "plugin", ignore=shutil.ignore_patterns("__pycache__"))
            (pkg / "node_modules").symlink_to(REPO / "node_modules")
            notes = base / "notes"
            _write(notes / "projects" / "garden.md", "# Garden\n\nlantern\n")
            home = base / "home"
            _write(home / "plugin-data" / "memory-bridge" / "policy.json", json.dumps(_policy(notes)))
            for path in [pkg, notes, home, *pkg.rglob("*"), *notes.rglob("*"), *home.rglob("*")]:
                if not path.is_symlink():
                    os.chown(path, uid, uid)
                    if path == pkg or pkg in path.parents:
                        os.chmod(path, 0o755 if path.is_dir() else 0o644)
            cli = str(pkg / "dist" / "src" / "cli" / "main.js")
            done = as_user(NODE, cli, "install", "--home", str(home))
            self.assertEqual(done.returncode, 0, done.stderr)
            done = as_user(NODE, cli, "doctor", "--home", str(home), "--json")
            plugin = next(c for c in json.loads(done.stdout)["checks"] if c["name"] == "plugin")
            self.assertIs(plugin["ok"], True, done.stdout)
            module = pkg / "dist" / "src" / "tools" / "read.js"
            for change, why in (
                (lambda: os.chmod(module, 0o646), "world_writable"),
                (lambda: os.chown(module, 12345, 12345), "untrusted_owner"),
                (lambda: os.chown(module, 0, 0), None),  # root's file is trusted
            ):
                change()
                done = as_user(NODE, str(CLI), "doctor", "--home", str(home))
                if why is None:
                    self.assertNotIn("worker_program_untrusted", done.stdout)
                else:
                    self.assertIn(f"not trusted: {module} ({why}:", done.stdout)
                    self.assertEqual(done.returncode, 1)
                    os.chown(module, uid, uid)
                    os.chmod(module, 0o644)
        finally:
            shutil.rmtree(base, ignore_errors=True)

    def test_a_link_out_of_the_tree_is_judged_by_its_target(self):
        base = _mkdir(self.tmp / "linked")
        pkg, cli = _fake_package(base)
        outside = base / "elsewhere"
        outside.mkdir()
        target = outside / "lib.js"
        target.write_text("// elsewhere\n")
        os.chmod(outside, 0o755)
        os.chmod(target, 0o644)
        (pkg / "node_modules" / "dep" / "lib.js").symlink_to(target)
        (pkg / "node_modules" / "loop").symlink_to(pkg / "node_modules")  # a cycle ends
        self.assertEqual(_gate_verdict(cli), {"ok": True})
        os.chmod(target, 0o664)
        self.assertEqual(_gate_verdict(cli), {"ok": False, "why": "group_writable", "path": str(target)})


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
