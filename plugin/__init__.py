"""memory-bridge: the Hermes Agent plugin shim. It only forwards (docs/HERMES.md §The shim's responsibilities).

Inside Hermes it registers the two read-only tools (their schemas come from ``tools.json`` beside this file), the
``pre_llm_call`` recall hook, the ``@memory:`` context-reference provider and the system prompt section; reads who
is calling from Hermes's own per-call context (home, profile, cron, subagent); and sends each call as one JSON
line to a long-lived ``memory-bridge worker`` child (Node.js), which decides everything else: policy, trust,
search, read, recall, framing. Handlers never raise into Hermes: a failure answers ``unavailable`` (tools) or
nothing (the other surfaces) and logs a reason code. Only the Python standard library is used (3.11 or newer).
"""

from __future__ import annotations

import atexit
import contextvars
import importlib
import json
import logging
import math
import os
import selectors
import stat
import subprocess
import sys
import threading
import time
import uuid

__all__ = ["register"]

logger = logging.getLogger("memory_bridge")
# Hermes configures logging; without that (a bare import, the tests) stay silent rather than print to stderr.
logger.addHandler(logging.NullHandler())

SEARCH_TOOL = "memory_bridge_search"
READ_TOOL = "memory_bridge_read"
# The worker's request names of the other surfaces (src/hermes/surfaces.ts), the @memory: prefix, the section id.
RECALL, COMPLETE, EXPAND, PROMPT_SECTION = "hermes_recall", "hermes_complete", "hermes_expand", "hermes_prompt_section"
REFERENCE_PREFIX = "memory"
SECTION_ID = "memory-bridge"

# Seconds one call may take from sending the request to the reply (a worker start included), unless
# MEMORY_BRIDGE_TIMEOUT or install.json's timeout_seconds says otherwise; any setting is clamped to the bounds.
CALL_TIMEOUT_SECONDS = 10.0
MIN_TIMEOUT_SECONDS = 0.5
MAX_TIMEOUT_SECONDS = 600.0
TIMEOUT_ENV = "MEMORY_BRIDGE_TIMEOUT"
# What a surface other than the tools waits at most before it answers nothing, so memory never holds up a turn.
SURFACE_TIMEOUT_SECONDS = 3.0
# A worker with requests outstanding that has written nothing for this long is taken to be hung and replaced.
STUCK_SECONDS = 120.0
# Most timed-out requests whose late replies are still awaited; past this the worker is replaced.
MAX_ABANDONED = 64
# Longest request or reply line in bytes without the newline; largest install.json; its marker.
MAX_LINE_BYTES = 1 << 20
MAX_INSTALL_RECORD_BYTES = 64 * 1024
INSTALL_MARKER = "memory-bridge-plugin"
# The exit status of the launch gate (src/hermes/launch.ts) when it refuses the worker program.
UNTRUSTED_EXIT = 78
# Where register() leaves what it found, for `memory-bridge status` and `doctor` (beside install.json).
API_REPORT_FILE = "hermes-api.json"

UNAVAILABLE = '{"ok": false, "error": {"code": "unavailable", "message": "Memory is unavailable."}}'
INVALID_ARGUMENTS = (
    '{"ok": false, "error": {"code": "invalid_request", "message": "The request is invalid.", '
    '"hint": "arguments: a JSON object"}}'
)
_HERE = os.path.dirname(os.path.abspath(__file__))


class _Refused(Exception):
    """The call cannot go ahead; ``reason`` is a short code for the operator log (never shown to the model). Every
    reason has a remedy in src/remedies.ts (tests/hermes/shim-reasons.test.ts checks it)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _BadArguments(Exception):
    """The tool arguments cannot be written as JSON at all."""


# -- Who is calling (docs/HERMES.md §Who is calling, §Cron and subagents) ------------------------------------------


def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception as exc:  # ImportError, or anything the module raises while loading
        raise _Refused("context_module_missing") from exc


def _helper(module, name: str):
    fn = getattr(module, name, None)
    if not callable(fn):
        raise _Refused("context_helper_missing")
    return fn


def _strict_bool(value) -> bool:
    # A helper that answers something other than a real bool is not a signal we understand: fail closed.
    if value is True or value is False:
        return value
    raise _Refused("context_signal_conflict")


def _home_path(value) -> str:
    """A home as Hermes returns it (str or Path) → normalised absolute path, or refuse ``home_relative`` (a relative
    HERMES_HOME) or ``bad_home`` (not a non-empty path without NUL)."""
    try:
        text = os.fspath(value)
    except TypeError as exc:
        raise _Refused("bad_home") from exc
    if not isinstance(text, str) or text == "" or "\x00" in text:
        raise _Refused("bad_home")
    if not os.path.isabs(text):
        raise _Refused("home_relative")
    text = os.path.normpath(text)
    return "/" + text.lstrip("/") if text.startswith("//") else text


def _real_home(home: str) -> str:
    """``home`` unless a component is a symbolic link (``home_symlink``): the worker never follows one, so say why."""
    if os.path.realpath(home) != home:
        raise _Refused("home_symlink")
    return home


def _optional_home(value) -> str | None:
    return None if value is None or value == "" else _home_path(value)


def _registration_home() -> tuple[str | None, str | None]:
    """The home seen while ``register`` runs → (home, None), or (None, reason)."""
    try:
        return _real_home(_home_path(importlib.import_module("hermes_constants").get_hermes_home())), None
    except _Refused as refusal:
        return None, refusal.reason
    except Exception:
        return None, "context_module_missing"


def _session_value(get_session_env, name: str) -> str:
    value = get_session_env(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Refused("context_signal_conflict")
    return value.strip()


# How Hermes itself reads the cron session flag (stripped, lower-cased text; some releases bind True/False).
_CRON_FLAG = {"1": True, "true": True, "yes": True, "on": True, "": False, "0": False, "false": False, "no": False,
              "off": False}  # fmt: skip


def _cron_flag(value) -> bool:
    """``HERMES_CRON_SESSION`` → cron or not; any other value or type refuses ``context_signal_conflict``."""
    if value is None or value is True or value is False:
        return bool(value)
    if not isinstance(value, str) or value.strip().lower() not in _CRON_FLAG:
        raise _Refused("context_signal_conflict")
    return _CRON_FLAG[value.strip().lower()]


def _child_marker(delegation):
    """Hermes's context variable that marks in-process delegated child execution, or None where it has none."""
    var = getattr(delegation, "_DELEGATED_CHILD_CONTEXT", None)
    return var if isinstance(var, contextvars.ContextVar) else None


def _parent_cron_execution(cron_fn, delegation):
    """``cron_fn()`` as the parent of this delegated child sees it (a copy of the context, the marker False)."""
    marker = _child_marker(delegation)
    if marker is None:
        return None

    def as_parent():
        marker.set(False)
        return cron_fn()

    return contextvars.copy_context().run(as_parent)


class _CallerProbe:
    """The caller record ``{"home", "profile", "cron", "subagent"}`` of one call, from Hermes's context only."""

    def __init__(self, ctx, registered_home: str | None, registration_reason: str | None = None) -> None:
        self._ctx = ctx
        self._registered_home = registered_home
        self._registration_reason = registration_reason

    def caller(self) -> dict:
        # Plugin-host isolation runs plugins in a separate process whose context describes the host, not the turn.
        if os.environ.get("HERMES_PLUGIN_HOST_PROCESS", "") not in ("", "0"):
            raise _Refused("plugin_host_process")
        constants = _import("hermes_constants")
        secret_scope = _import("agent.secret_scope")
        delegation = _import("agent.delegation_context")
        get_session_env = _helper(_import("gateway.session_context"), "get_session_env")
        get_home = _helper(constants, "get_hermes_home")
        override = _optional_home(_helper(constants, "get_hermes_home_override")())
        multiplex = _strict_bool(_helper(secret_scope, "is_multiplex_active")())
        if multiplex:
            # One gateway serves several profiles: only the home bound to this call says which one is asking.
            if override is None:
                raise _Refused("multiplex_unbound")
            scope_home = getattr(secret_scope, "current_secret_scope_home", None)
            if scope_home is not None and not callable(scope_home):
                raise _Refused("context_helper_missing")
            if scope_home is not None and _optional_home(scope_home()) != override:
                raise _Refused("context_signal_conflict")
            home = _real_home(override)
        else:
            home = _real_home(_home_path(get_home()))
            if self._registered_home is None:
                raise _Refused(self._registration_reason or "home_mismatch")
            if home != self._registered_home:
                raise _Refused("home_mismatch")
        subagent = _strict_bool(_helper(delegation, "is_delegated_child_process_context")())
        cron = self._cron(get_session_env, delegation, subagent)
        return {"home": home, "profile": self._profile_name(constants, home, multiplex), "cron": cron,
                "subagent": subagent}  # fmt: skip

    def _cron(self, get_session_env, delegation, subagent: bool) -> bool:
        """Any cron signal says cron: the session flag, the session platform "cron", or a current cron execution
        (for a subagent, also as its parent sees it). A signal Hermes lacks is absent; a malformed one refuses."""
        cron = _cron_flag(get_session_env("HERMES_CRON_SESSION"))
        cron = cron or _session_value(get_session_env, "HERMES_SESSION_PLATFORM").lower() == "cron"
        cron_fn = getattr(self._ctx, "current_cron_execution", None)
        if cron_fn is not None:
            if not callable(cron_fn):
                raise _Refused("context_helper_missing")
            if cron_fn() is not None:
                cron = True
            elif subagent and not cron:
                cron = _parent_cron_execution(cron_fn, delegation) is not None
        return cron

    def _profile_name(self, constants, home: str, multiplex: bool) -> str:
        """For the worker's logs only, never for a decision; "" when Hermes names none."""
        name = None if multiplex else getattr(self._ctx, "profile_name", None)
        if not isinstance(name, str) or name == "":
            fn = getattr(constants, "profile_name_for_home", None)
            try:
                name = fn(home) if callable(fn) else None
            except Exception:
                name = None
        return name if isinstance(name, str) and 0 < len(name) <= 128 else ""


# -- The program started (docs/HERMES.md §Worker program trust) -----------------------------------------------------


def _timeout_seconds(env_value, record_value) -> float:
    """The first usable of MEMORY_BRIDGE_TIMEOUT and install.json's ``timeout_seconds``, else CALL_TIMEOUT_SECONDS;
    clamped to [MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS]. Unparsable, non-finite or boolean values are ignored."""
    for raw in (env_value, record_value):
        if raw is None or isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError, OverflowError):
            continue
        if math.isfinite(value):
            return min(max(value, MIN_TIMEOUT_SECONDS), MAX_TIMEOUT_SECONDS)
    return float(CALL_TIMEOUT_SECONDS)


class _Untrusted(Exception):
    """One file or directory fails the trust rule; ``path`` and ``why`` are for the operator, never the model."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(why)
        self.path = path
        self.why = why


def _mode_problem(st: os.stat_result, uid: int) -> str | None:
    """Owner root or ``uid``, no group or world write bit."""
    if st.st_uid not in (uid, 0):
        return "untrusted_owner"
    if st.st_mode & stat.S_IWGRP:
        return "group_writable"
    return "world_writable" if st.st_mode & stat.S_IWOTH else None


def _check_directory_chain(directory: str, uid: int) -> None:
    """Each directory from ``directory`` up to ``/`` (lstat) passes ``_mode_problem``, except that a root-owned
    sticky directory above the first level (such as /tmp) may be group or world writable."""
    first = True
    while True:
        try:
            st = os.lstat(directory)
        except OSError as exc:
            raise _Refused("worker_start_failed") from exc
        if not stat.S_ISDIR(st.st_mode):
            raise _Untrusted(directory, "not_directory")
        problem = _mode_problem(st, uid)
        sticky = st.st_uid == 0 and st.st_mode & stat.S_ISVTX
        if problem is not None and not (problem != "untrusted_owner" and sticky and not first):
            raise _Untrusted(directory, problem)
        parent = os.path.dirname(directory)
        if parent == directory:
            return
        directory, first = parent, False


def _check_file(path: str, uid: int) -> None:
    """A regular file (a link followed, its target's directories checked) passing ``_mode_problem``, with every
    directory above it."""
    try:
        _check_directory_chain(os.path.dirname(path), uid)
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            path = os.path.realpath(path)
            _check_directory_chain(os.path.dirname(path), uid)
            st = os.stat(path)
    except OSError as exc:
        raise _Refused("worker_start_failed") from exc
    if not stat.S_ISREG(st.st_mode):
        raise _Untrusted(path, "not_regular")
    problem = _mode_problem(st, uid)
    if problem is not None:
        raise _Untrusted(path, problem)


# The CLI's place inside its package, and the launch gate's (src/hermes/launch.ts).
_CLI_IN_PACKAGE = os.sep.join(("", "dist", "src", "cli", "main.js"))
_GATE_IN_PACKAGE = os.sep.join(("", "dist", "src", "hermes", "launch.js"))


def _program(node: str, cli: str) -> list[str]:
    """The command that starts the worker, once what it runs first passes the trust rule; raises _Refused
    ``worker_program_untrusted`` (or ``worker_start_failed``) otherwise.

    Checked here: the node binary, the CLI and, for a CLI in its package, the package's ``package.json`` and the
    launch gate, each with every directory above it. The gate imports nothing but Node's built-ins and judges the
    rest of what Node could load (the package's dist/ and node_modules trees) before it runs the CLI."""
    uid = os.geteuid()
    try:
        for path in (node, cli):
            _check_file(path, uid)
        if not cli.endswith(_CLI_IN_PACKAGE):
            return [node, cli, "worker"]
        package = cli[: -len(_CLI_IN_PACKAGE)] or os.sep
        if os.path.lexists(os.path.join(package, "package.json")):
            _check_file(os.path.join(package, "package.json"), uid)
        gate = package.rstrip(os.sep) + _GATE_IN_PACKAGE
        _check_file(gate, uid)
        return [node, gate, cli, "worker"]
    except _Untrusted as untrusted:
        logger.warning("memory-bridge worker program refused: %s", untrusted.why)
        raise _Refused("worker_program_untrusted") from untrusted


def _load_install_record(directory: str) -> tuple[str, str, object]:
    """install.json next to this file → (node, cli, timeout_seconds or None), or refuse. It decides which program
    runs, so it must be a regular file owned by this user (or root) that nobody else can write."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(os.path.join(directory, "install.json"), flags)
    except OSError as exc:
        raise _Refused("install_record_missing") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022:
            raise _Refused("install_record_untrusted")
        if st.st_size > MAX_INSTALL_RECORD_BYTES:
            raise _Refused("install_record_invalid")
        raw = os.read(fd, MAX_INSTALL_RECORD_BYTES + 1)
    finally:
        os.close(fd)
    try:
        record = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Refused("install_record_invalid") from exc
    if not isinstance(record, dict) or record.get("marker") != INSTALL_MARKER:
        raise _Refused("install_record_invalid")
    node, cli = record.get("node"), record.get("cli")
    for value in (node, cli):
        if not isinstance(value, str) or not os.path.isabs(value) or "\x00" in value:
            raise _Refused("install_record_invalid")
    return node, cli, record.get("timeout_seconds")


# -- The worker child (docs/HERMES.md §Worker protocol) ------------------------------------------------------------


class _Worker:
    """One `memory-bridge worker` child and the bytes read from it so far. Used only under the client's lock."""

    def __init__(self, command: list[str]) -> None:
        # A minimal environment: nothing from the Hermes process; a small young generation keeps the long-lived
        # worker's resident memory down (docs/BENCHMARKS.md). A Ctrl-C in Hermes's terminal must not kill it.
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={"NODE_OPTIONS": "--max-semi-space-size=2"}, cwd="/", bufsize=0, close_fds=True,
            start_new_session=True,
        )  # fmt: skip
        self.buffer = bytearray()
        self.abandoned: set[str] = set()  # ids of timed-out requests whose replies are dropped when they come
        self.silent_since: float | None = None  # since when nothing came while requests were outstanding
        try:
            os.set_blocking(self.proc.stdin.fileno(), False)
            os.set_blocking(self.proc.stdout.fileno(), False)
        except BaseException:
            self.stop()
            raise
        threading.Thread(target=self._forward_stderr, args=(self.proc.stderr,), daemon=True).start()

    @staticmethod
    def _forward_stderr(stream) -> None:
        # The worker logs short reason codes on stderr; pass them to Hermes's logging, bounded per line.
        try:
            for line in iter(stream.readline, b""):
                text = line[:512].decode("utf-8", "replace").rstrip()
                if text:
                    logger.info("worker: %s", text)
        except Exception:
            pass
        finally:
            try:
                stream.close()
            except Exception:
                pass

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stuck(self, now: float) -> bool:
        return self.silent_since is not None and now - self.silent_since >= STUCK_SECONDS

    def abandon(self, request_id: str, sent_at: float) -> None:
        self.abandoned.add(request_id)
        if self.silent_since is None:
            self.silent_since = sent_at

    @staticmethod
    def _wait(fd: int, events: int, deadline: float) -> bool:
        # The default selector (epoll, kqueue or poll) has no FD_SETSIZE limit (a busy Hermes holds > 1024 fds).
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Refused("worker_timeout")
        with selectors.DefaultSelector() as selector:
            selector.register(fd, events)
            return bool(selector.select(remaining))

    def send(self, data: bytes, deadline: float) -> None:
        fd, view = self.proc.stdin.fileno(), memoryview(data)
        while view:
            if not self._wait(fd, selectors.EVENT_WRITE, deadline):
                continue
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:
                continue
            except OSError as exc:  # EPIPE: the worker is gone
                raise self._ended() from exc

    def receive_line(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while True:
            newline = self.buffer.find(b"\n")
            if newline != -1:
                line = bytes(self.buffer[:newline])
                del self.buffer[: newline + 1]
                self.silent_since = time.monotonic() if self.abandoned else None  # any line is a sign of life
                return line
            if len(self.buffer) > MAX_LINE_BYTES:
                raise _Refused("worker_protocol")
            if not self._wait(fd, selectors.EVENT_READ, deadline):
                continue
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise self._ended() from exc
            if not chunk:
                raise self._ended()
            self.buffer += chunk

    def _ended(self) -> _Refused:
        """Why the worker went away: the launch gate refused its program, or it crashed."""
        try:
            code = self.proc.wait(timeout=2)
        except Exception:
            code = None
        return _Refused("worker_program_untrusted" if code == UNTRUSTED_EXIT else "worker_crashed")

    def stop(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except Exception:
                pass
        try:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(timeout=5)
        except Exception:
            pass


class _WorkerClient:
    """Sends one request at a time to a lazily started worker; thread-safe (one lock around the pipe)."""

    def __init__(self, directory: str) -> None:
        self._directory = directory
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self.warm_up_sent = threading.Event()  # clear while a warm-up is on its way to the worker (_start_warm_up)
        self.warm_up_sent.set()

    def call(self, tool: str, args, caller: dict, timeout: float | None = None, wait: bool = True) -> dict | None:
        """One request → its reply's result; ``timeout`` (seconds) lowers the per-call timeout for this call. With
        ``wait`` False (the warm-up) the reply is not awaited but dropped by id when a later call reads: None."""
        request_id = uuid.uuid4().hex
        # "v" and "id" first: the worker can still answer a line too long to parse by reading its start.
        request = {"v": 1, "id": request_id, "tool": tool, "args": args, "caller": caller}
        try:
            line = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
            raise _BadArguments() from exc  # an object, NaN, a lone surrogate: no valid request holds them
        if len(line) > MAX_LINE_BYTES:
            raise _Refused("request_too_large")
        node, cli, record_timeout = _load_install_record(self._directory)
        timeout = min(_timeout_seconds(os.environ.get(TIMEOUT_ENV), record_timeout), timeout or math.inf)
        # The wait for the lock counts against the same deadline: concurrent calls must not queue without bound.
        deadline = time.monotonic() + timeout
        if wait:  # a call never overtakes the warm-up on its way to the worker: it queues behind it there instead
            self.warm_up_sent.wait(timeout)
        if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise _Refused("worker_busy")
        try:
            worker = self._worker
            if worker is not None and (not worker.alive() or worker.stuck(time.monotonic())):
                if worker.alive():
                    logger.warning("memory-bridge worker silent too long; restarting it")
                worker.stop()
                worker = self._worker = None
            if worker is None:
                command = _program(node, cli)
                try:
                    worker = self._worker = _Worker(command)
                except OSError as exc:
                    raise _Refused("worker_start_failed") from exc
            keep, sent_at = False, None
            try:
                worker.send(line + b"\n", deadline)
                sent_at = time.monotonic()
                if not wait:
                    worker.abandon(request_id, sent_at)
                    keep = True
                    return None
                result = _await_reply(worker, request_id, deadline)
                keep = True
            except _Refused as refusal:
                # Only the answer is late: keep the worker (it may be building a large index) and drop the reply
                # when it comes. A partly written request leaves the pipe in an unknown state.
                if refusal.reason == "worker_timeout" and sent_at is not None:
                    worker.abandon(request_id, sent_at)
                    keep = len(worker.abandoned) <= MAX_ABANDONED
                raise
            finally:
                if not keep:  # a crash, a bad reply, a partial write: the next call starts a fresh worker
                    worker.stop()
                    self._worker = None
        finally:
            self._lock.release()
        return result

    def close(self) -> None:
        with self._lock:
            if self._worker is not None:
                self._worker.stop()
                self._worker = None


def _await_reply(worker: _Worker, request_id: str, deadline: float) -> dict:
    """Reply lines until ours, skipping late replies to abandoned requests. The worker answers in order, so once
    ours is in no abandoned reply is still due, and any further buffered bytes are not our protocol. Ours must be
    exactly ``{"v": 1, "id": <ours>, "result": {"ok": <bool>, …}}``; the worker (tested TypeScript) owns the rest
    of the result's shape (docs/TOOLS.md §Results, src/hermes/surfaces.ts)."""
    while True:
        try:
            reply = json.loads(worker.receive_line(deadline).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise _Refused("worker_protocol") from exc
        reply_id = reply.get("id") if isinstance(reply, dict) else None
        if isinstance(reply_id, str) and reply_id in worker.abandoned:
            worker.abandoned.discard(reply_id)
            worker.silent_since = time.monotonic() if worker.abandoned else None
            logger.info("memory-bridge: dropped a late reply")
            continue
        if not _valid_reply(reply, request_id):
            raise _Refused("worker_protocol")
        worker.abandoned.clear()
        worker.silent_since = None
        if worker.buffer:
            raise _Refused("worker_protocol")  # one request, one reply
        return reply["result"]


def _valid_reply(reply, request_id: str) -> bool:
    result = reply.get("result") if isinstance(reply, dict) else None
    return (
        set(reply) == {"v", "id", "result"}
        and type(reply["v"]) is int
        and reply["v"] == 1
        and reply["id"] == request_id
        and isinstance(result, dict)
        and isinstance(result.get("ok"), bool)
    )


# -- What Hermes calls ----------------------------------------------------------------------------------------------


class _Tools:
    def __init__(self, probe: _CallerProbe, client: _WorkerClient) -> None:
        self._probe = probe
        self._client = client

    def handle(self, tool: str, args) -> str:
        """One tool call → the public JSON string. Never raises an Exception."""
        try:
            return json.dumps(self._client.call(tool, args, self._probe.caller()), ensure_ascii=False)
        except _BadArguments:
            return INVALID_ARGUMENTS
        except _Refused as refusal:
            logger.warning("%s refused: %s (memory-bridge doctor says what to do)", tool, refusal.reason)
        except Exception as exc:  # never let a failure escape into Hermes's tool loop
            logger.warning("%s refused: internal (%s)", tool, type(exc).__name__)
        return UNAVAILABLE

    def search(self, args, **kwargs) -> str:
        return self.handle(SEARCH_TOOL, args)

    def read(self, args, **kwargs) -> str:
        return self.handle(READ_TOOL, args)


def _message_text(message) -> str:
    """A user message as Hermes passes it: the string, or the text parts of a list of content parts."""
    if isinstance(message, str):
        return message
    if not isinstance(message, list):
        return ""
    return "\n".join(p["text"] for p in message if isinstance(p, dict) and p.get("type") == "text"
                     and isinstance(p.get("text"), str))  # fmt: skip


class _Surfaces:
    """The pre_llm_call hook, the @memory: provider's methods and the prompt section: each forwards one request
    and answers nothing on any failure or after SURFACE_TIMEOUT_SECONDS, logging a reason code."""

    def __init__(self, probe: _CallerProbe, client: _WorkerClient) -> None:
        self._probe = probe
        self._client = client

    def ask(self, name: str, args: dict) -> dict | None:
        try:
            answer = self._client.call(name, args, self._probe.caller(), SURFACE_TIMEOUT_SECONDS)
            return answer if answer.get("ok") is True else None
        except _Refused as refusal:
            logger.warning("%s gave nothing: %s", name, refusal.reason)
        except Exception as exc:
            logger.warning("%s gave nothing: internal (%s)", name, type(exc).__name__)
        return None

    def context(self, name: str, args: dict) -> str | None:
        text = (self.ask(name, args) or {}).get("context")
        return text if isinstance(text, str) and text else None

    def pre_llm_call(self, **kwargs):
        """``{"context": <framed recalled notes>}`` for this API call only, or None."""
        message = _message_text(kwargs.get("user_message"))
        context = self.context(RECALL, {"message": message}) if message.strip() else None
        return None if context is None else {"context": context}

    def prompt_section(self, session_info=None) -> str:
        return self.context(PROMPT_SECTION, {}) or ""

    def completions(self, query, limit) -> list[dict]:
        args = {"query": query if isinstance(query, str) else "", "limit": max(1, min(int(limit), 10))}
        items = (self.ask(COMPLETE, args) or {}).get("items")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _reference_provider(surfaces: _Surfaces, references):
    """An instance of Hermes's context-reference provider class for ``@memory:``; its coroutines run the blocking
    worker call in a thread (asyncio.to_thread copies the caller's context along)."""
    import asyncio

    class _MemoryReferences(references.ContextReferenceProvider):
        prefix = REFERENCE_PREFIX
        description = "Notes this profile may read (memory-bridge)"

        async def autocomplete(self, query: str, *, limit: int = 10) -> list:
            items = await asyncio.to_thread(surfaces.completions, query, limit)
            return [references.ContextCompletionItem(str(i.get("text")), str(i.get("display")), str(i.get("meta")))
                    for i in items]  # fmt: skip

        async def expand(self, target: str):
            if not isinstance(target, str) or not target:
                return None
            return await asyncio.to_thread(surfaces.context, EXPAND, {"target": target[:1024]})

    return _MemoryReferences()


_clients: list[_WorkerClient] = []


def _close_all() -> None:
    for client in _clients:
        try:
            client.close()
        except Exception:
            pass


atexit.register(_close_all)


# -- Registration (docs/HERMES.md §Hermes API probe) ---------------------------------------------------------------

# Context helpers every call reads; without one of them no call could be served, so nothing is registered.
REQUIRED_HELPERS = (
    ("hermes_constants", "get_hermes_home"),
    ("hermes_constants", "get_hermes_home_override"),
    ("agent.secret_scope", "is_multiplex_active"),
    ("agent.delegation_context", "is_delegated_child_process_context"),
    ("gateway.session_context", "get_session_env"),
)


# Keyword arguments register() passes to ctx.register_tool.
REGISTER_KEYWORDS = ("name", "toolset", "schema", "handler", "description")


def _register_tool_problem(ctx) -> str | None:
    """What is wrong with ``ctx.register_tool`` for our call, or None: it must be callable, accept every keyword we
    pass (by name or ``**kwargs``) and require no other. A signature Python cannot read is not held against it."""
    import inspect

    fn = getattr(ctx, "register_tool", None)
    if not callable(fn):
        return "ctx.register_tool"
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    named = {p.name for p in parameters if p.kind in kinds}
    any_keyword = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    missing = [k for k in REGISTER_KEYWORDS if k not in named and not any_keyword]
    required = [p.name for p in parameters if p.kind in kinds and p.default is inspect.Parameter.empty
                and p.name not in REGISTER_KEYWORDS]  # fmt: skip
    if missing:
        return "ctx.register_tool keyword " + ", ".join(missing)
    return "ctx.register_tool requires " + ", ".join(required) if required else None


def _hermes_version() -> str | None:
    """The running Hermes's version (the installed distribution, else ``hermes_cli.__version__``), or None."""
    try:
        import importlib.metadata as metadata

        return str(metadata.version("hermes-agent"))
    except Exception:
        pass
    try:
        version = getattr(sys.modules.get("hermes_cli") or importlib.import_module("hermes_cli"), "__version__", None)
        return version if isinstance(version, str) else None
    except Exception:
        return None


def probe_hermes_api(ctx) -> dict:
    """What this Hermes offers the shim, as ``hermes-api.json`` holds it (src/hermes/api-report.ts reads it):
    ``{"v": 1, "checked_at", "python", "hermes_version", "register_tool", "helpers", "optional", "missing"}``;
    ``missing`` names what stops registration. Never raises."""
    missing: list[str] = []
    problem = _register_tool_problem(ctx)
    register_tool = problem is None
    if problem is not None:
        missing.append(problem)
    helpers: dict[str, bool] = {}
    modules: dict[str, object] = {}
    for module_name, helper in REQUIRED_HELPERS:
        if module_name not in modules:
            try:
                modules[module_name] = importlib.import_module(module_name)
            except Exception:
                modules[module_name] = None
                missing.append(f"module {module_name}")
        module = modules[module_name]
        helpers[f"{module_name}.{helper}"] = found = module is not None and callable(getattr(module, helper, None))
        if module is not None and not found:
            missing.append(f"{module_name}.{helper}")
    delegation, secret_scope = modules.get("agent.delegation_context"), modules.get("agent.secret_scope")
    optional = {
        "ctx.current_cron_execution": callable(getattr(ctx, "current_cron_execution", None)),
        "parent_cron_view": delegation is not None and _child_marker(delegation) is not None,
        "agent.secret_scope.current_secret_scope_home": callable(getattr(secret_scope, "current_secret_scope_home",
                                                                         None)),
        "ctx.profile_name": isinstance(getattr(ctx, "profile_name", None), str),
    }  # fmt: skip
    return {"v": 1, "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "python": "%d.%d.%d" % sys.version_info[:3], "hermes_version": _hermes_version(),
            "register_tool": register_tool, "helpers": helpers, "optional": optional, "missing": missing}  # fmt: skip


def _write_api_report(directory: str, report: dict) -> None:
    """Replace ``<directory>/hermes-api.json`` (mode 0600, written beside it and renamed). Best effort."""
    path = os.path.join(directory, API_REPORT_FILE)
    temporary = os.path.join(directory, f".{API_REPORT_FILE}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(temporary, flags, 0o600)
        try:
            os.write(fd, (json.dumps(report, indent=2, sort_keys=True) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except Exception as exc:
        logger.debug("memory-bridge: could not write %s (%s)", API_REPORT_FILE, type(exc).__name__)
        try:
            os.unlink(temporary)
        except OSError:
            pass


def _register_surfaces(ctx, surfaces: _Surfaces) -> list[str]:
    """The hook, the @memory: provider and the prompt section, as far as this Hermes offers them; their names."""
    steps = (
        ("pre_llm_call", lambda: ctx.register_hook("pre_llm_call", surfaces.pre_llm_call)),
        ("context_reference", lambda: ctx.register_context_reference(
            _reference_provider(surfaces, importlib.import_module("agent.context_references")))),
        ("system_prompt_section", lambda: ctx.register_system_prompt_section(
            SECTION_ID, surfaces.prompt_section, max_chars=4000)),
    )  # fmt: skip
    done = []
    for name, step in steps:
        try:
            step()
            done.append(name)
        except Exception as exc:
            logger.debug("memory-bridge: %s not registered (%s)", name, type(exc).__name__)
    return done


# Warm first call (docs/HERMES.md): once the tools are registered, a background thread starts the worker and asks it
# to build the profile's view; a tool call that comes during the build waits for it in the worker.
# MEMORY_BRIDGE_WARM_UP=0 in Hermes's environment turns it off (the first call then builds the view).
WARM_UP_TOOL = "warm_up"
WARM_UP_ENV = "MEMORY_BRIDGE_WARM_UP"
WARM_UP_ON_REGISTER = True


def _start_warm_up(probe: _CallerProbe, client: _WorkerClient) -> None:
    """Send the warm-up for the caller Hermes's context names now, from a daemon thread; never raises."""
    if not WARM_UP_ON_REGISTER or os.environ.get(WARM_UP_ENV, "").strip() == "0":
        return

    def send(caller) -> None:
        try:
            client.call(WARM_UP_TOOL, {}, caller, wait=False)
        except _Refused as refusal:
            logger.info("memory-bridge: no warm-up: %s", refusal.reason)
        except Exception as exc:
            logger.info("memory-bridge: no warm-up: internal (%s)", type(exc).__name__)
        finally:
            client.warm_up_sent.set()

    try:
        caller = probe.caller()
        client.warm_up_sent.clear()
        threading.Thread(target=send, args=(caller,), name="memory-bridge-warm-up", daemon=True).start()
    except _Refused as refusal:
        logger.info("memory-bridge: no warm-up: %s", refusal.reason)
    except Exception as exc:  # no thread to be had: the first call builds the view
        client.warm_up_sent.set()
        logger.info("memory-bridge: no warm-up: internal (%s)", type(exc).__name__)


def register(ctx) -> None:
    """Hermes plugin entry point: probe the Hermes API (recorded in ``hermes-api.json`` for status and doctor);
    when something required is missing register nothing and log one warning naming it; else register both tools
    of ``tools.json`` and the other surfaces, then start the warm-up in the background (``_start_warm_up``)."""
    report = probe_hermes_api(ctx)
    registered_home, home_reason = _registration_home()
    report.update(home_problem=home_reason, registered=not report["missing"], surfaces=[])
    if report["missing"]:
        _write_api_report(_HERE, report)
        logger.warning("memory-bridge: this Hermes lacks %s; the memory_bridge tools are not registered",
                       "; ".join(report["missing"]))  # fmt: skip
        return
    if home_reason is not None:
        logger.warning("memory-bridge: every call will be refused: %s", home_reason)
    probe = _CallerProbe(ctx, registered_home, home_reason)
    client = _WorkerClient(_HERE)
    _clients.append(client)
    tools = _Tools(probe, client)
    with open(os.path.join(_HERE, "tools.json"), encoding="utf-8") as listing:
        catalog = json.load(listing)
    handlers = {SEARCH_TOOL: tools.search, READ_TOOL: tools.read}
    for entry in catalog["tools"]:
        ctx.register_tool(name=entry["name"], toolset=catalog["toolset"], schema=entry,
                          handler=handlers[entry["name"]], description=entry["description"])  # fmt: skip
    report["surfaces"] = _register_surfaces(ctx, _Surfaces(probe, client))
    _write_api_report(_HERE, report)
    _start_warm_up(probe, client)
