"""memory-bridge: the Hermes Agent plugin shim, which only forwards (docs/HERMES.md §What the shim does).

It registers the tools of ``tools.json``, the ``pre_llm_call`` hook, the ``@memory:`` references and the prompt
section; reads Hermes's in-process signals of each call as Hermes gives them; and sends each call as one JSON line to
a long-lived ``memory-bridge worker`` (Node.js), which decides everything else. Standard library only (3.11+).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import contextvars
import functools
import importlib
import importlib.metadata
import inspect
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

# Seconds one call may take from sending the request to the reply (a worker start included), unless
# MEMORY_BRIDGE_TIMEOUT or install.json's timeout_seconds says otherwise; any setting is clamped to the bounds.
CALL_TIMEOUT_SECONDS = 10.0
MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS = 0.5, 600.0
TIMEOUT_ENV = "MEMORY_BRIDGE_TIMEOUT"
# What a surface other than the tools waits at most before it answers nothing, so memory never holds up a turn.
SURFACE_TIMEOUT_SECONDS = 3.0
# A worker with requests outstanding that has written nothing for this long is taken to be hung and replaced;
# past this many timed-out requests whose late replies are still awaited, too.
STUCK_SECONDS = 120.0
MAX_ABANDONED = 64
# Longest request or reply line in bytes without the newline; largest install.json; its marker.
MAX_LINE_BYTES = 1 << 20
MAX_INSTALL_RECORD_BYTES = 64 * 1024
INSTALL_MARKER = "memory-bridge-plugin"
# The exit status of the launch gate (src/hermes/launch.ts) when it refuses the worker program.
UNTRUSTED_EXIT = 78
# What register() found, for `memory-bridge status` and `doctor` (src/hermes/api-report.ts reads it).
API_REPORT_FILE = "hermes-api.json"
# Warm first call (docs/HERMES.md): register() starts the worker and asks it to build the profile's view;
# MEMORY_BRIDGE_WARM_UP=0 in Hermes's environment turns that off (the first call then builds the view).
WARM_UP_ENV = "MEMORY_BRIDGE_WARM_UP"
WARM_UP_ON_REGISTER = True

UNAVAILABLE = '{"ok": false, "error": {"code": "unavailable", "message": "Memory is unavailable."}}'
INVALID_ARGUMENTS = ('{"ok": false, "error": {"code": "invalid_request", "message": "The request is invalid.", '
                     '"hint": "arguments: a JSON object"}}')
_HERE = os.path.dirname(os.path.abspath(__file__))
_UNREAD = object()  # a signal that could not be read at all


class _Refused(Exception):
    """The call cannot go ahead; ``reason`` is a code for the operator log with a remedy in src/remedies.ts."""

    reason = property(lambda self: self.args[0])


class _BadArguments(Exception):
    """The tool arguments cannot be written as JSON at all."""


# -- Hermes's signals (docs/HERMES.md §Who is calling; src/hermes/caller.ts decides from them) ----------------------
def _import(name: str):
    try:
        return importlib.import_module(name)
    except Exception as exc:  # ImportError, or anything the module raises while loading
        raise _Refused("context_module_missing") from exc


def _helper(holder, name: str):
    fn = getattr(holder, name, None)
    if not callable(fn):
        raise _Refused("context_helper_missing")
    return fn


def _raw(value):
    """A signal as JSON carries it: a path as its text, anything but None, a bool, an int or UTF-8 text as
    ``{"type": <its type's name>}``, which the worker refuses."""
    value = os.fspath(value) if isinstance(value, os.PathLike) else value
    plain = value is None or isinstance(value, (bool, int))
    if plain or isinstance(value, str) and value.encode("utf-8", "replace").decode("utf-8") == value:
        return value
    return {"type": type(value).__name__}


def _parent_cron_execution(cron_fn, delegation) -> bool | None:
    """Whether ``cron_fn()`` sees an execution in a copy of the context without Hermes's child marker (None: none)."""
    marker = getattr(delegation, "_DELEGATED_CHILD_CONTEXT", None)
    if not isinstance(marker, contextvars.ContextVar):
        return None

    def as_parent() -> bool:
        marker.set(False)
        return cron_fn() is not None

    return contextvars.copy_context().run(as_parent)


def _signals(ctx, registered_home) -> dict:
    """The request's ``hermes`` record (src/hermes/caller.ts); a helper this Hermes lacks leaves its key out."""
    constants = _import("hermes_constants")
    secret_scope = _import("agent.secret_scope")
    delegation = _import("agent.delegation_context")
    session_env = _helper(_import("gateway.session_context"), "get_session_env")
    signals = {"plugin_host": os.environ.get("HERMES_PLUGIN_HOST_PROCESS", ""),
               "home": _raw(_helper(constants, "get_hermes_home")()),
               "override": _raw(_helper(constants, "get_hermes_home_override")()),
               "multiplex": _raw(_helper(secret_scope, "is_multiplex_active")()),
               "subagent": _raw(_helper(delegation, "is_delegated_child_process_context")()),
               "cron_flag": _raw(session_env("HERMES_CRON_SESSION")),
               "platform": _raw(session_env("HERMES_SESSION_PLATFORM")),
               "profile_name": _raw(getattr(ctx, "profile_name", None))}
    if registered_home is not _UNREAD:
        signals["registered_home"] = registered_home
    if getattr(secret_scope, "current_secret_scope_home", None) is not None:
        signals["scope_home"] = _raw(_helper(secret_scope, "current_secret_scope_home")())
    if getattr(ctx, "current_cron_execution", None) is not None:
        cron_fn = _helper(ctx, "current_cron_execution")
        signals["cron_execution"] = cron_fn() is not None
        parent = None if signals["cron_execution"] else _parent_cron_execution(cron_fn, delegation)
        if parent is not None:
            signals["parent_cron_execution"] = parent
    home = signals["override"] or signals["home"]  # the home Hermes serves this call from, for its profile name
    name_for = getattr(constants, "profile_name_for_home", None)
    if callable(name_for) and isinstance(home, str):
        with contextlib.suppress(Exception):
            signals["home_profile"] = _raw(name_for(home))
    return signals


# -- The program started (docs/HERMES.md §Worker program trust) -----------------------------------------------------
def _timeout_seconds(env_value, record_value) -> float:
    """The first usable of MEMORY_BRIDGE_TIMEOUT and install.json's ``timeout_seconds``, else CALL_TIMEOUT_SECONDS;
    clamped to [MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS]. Unparsable, non-finite or boolean values are ignored."""
    for raw in (env_value, record_value):
        with contextlib.suppress(TypeError, ValueError, OverflowError):
            value = math.nan if isinstance(raw, bool) else float(raw)
            if math.isfinite(value):
                return min(max(value, MIN_TIMEOUT_SECONDS), MAX_TIMEOUT_SECONDS)
    return float(CALL_TIMEOUT_SECONDS)


def _mode_problem(st: os.stat_result, uid: int) -> str | None:
    """Owner root or ``uid``, no group or world write bit."""
    if st.st_uid not in (uid, 0):
        return "untrusted_owner"
    if st.st_mode & stat.S_IWGRP:
        return "group_writable"
    return "world_writable" if st.st_mode & stat.S_IWOTH else None


def _file_problem(path: str, uid: int) -> str | None:
    """A regular file passing ``_mode_problem``, with every directory above it and above a link's target (lstat);
    a root-owned sticky directory above the first level (/tmp) may be writable. The reason code, or None."""
    for directory in dict.fromkeys(os.path.dirname(p) for p in (path, os.path.realpath(path))):
        first = True
        while True:
            st = os.lstat(directory)
            problem = _mode_problem(st, uid) if stat.S_ISDIR(st.st_mode) else "not_directory"
            sticky = st.st_uid == 0 and st.st_mode & stat.S_ISVTX and not first
            if problem is not None and not (sticky and problem in ("group_writable", "world_writable")):
                return problem
            if os.path.dirname(directory) == directory:
                break
            directory, first = os.path.dirname(directory), False
    st = os.stat(path)
    return _mode_problem(st, uid) if stat.S_ISREG(st.st_mode) else "not_regular"


def _program(node: str, cli: str) -> list[str]:
    """The worker's command once node and the launch gate of the CLI's package (the CLI outside one) pass the
    trust rule: the gate judges the rest before the CLI runs (docs/HERMES.md §Worker program trust)."""
    in_package = os.path.join(os.sep, "dist", "src", "cli", "main.js")  # the CLI's place in its package
    first = cli
    if cli.endswith(in_package):
        first = os.path.join(cli[: -len(in_package)] or os.sep, "dist", "src", "hermes", "launch.js")
    for path in (node, first):
        try:
            problem = _file_problem(path, os.geteuid())
        except OSError as exc:
            raise _Refused("worker_start_failed") from exc
        if problem is not None:
            logger.warning("memory-bridge worker program refused: %s", problem)
            raise _Refused("worker_program_untrusted")
    return [node, cli, "worker"] if first == cli else [node, first, cli, "worker"]


def _load_install_record(directory: str) -> tuple[str, str, object]:
    """install.json → (node, cli, timeout_seconds); it names the program, so only this user or root may write it."""
    try:
        fd = os.open(os.path.join(directory, "install.json"), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise _Refused("install_record_missing") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022:
            raise _Refused("install_record_untrusted")
        raw = os.read(fd, MAX_INSTALL_RECORD_BYTES + 1)
    finally:
        os.close(fd)
    with contextlib.suppress(UnicodeDecodeError, ValueError, TypeError, KeyError, RecursionError):
        record = json.loads(raw.decode("utf-8")) if len(raw) <= MAX_INSTALL_RECORD_BYTES else {}
        paths = (record["node"], record["cli"])
        if record["marker"] == INSTALL_MARKER and all(os.path.isabs(p) and "\x00" not in p for p in paths):
            return record["node"], record["cli"], record.get("timeout_seconds")
    raise _Refused("install_record_invalid")


# -- The worker child and the framing (docs/HERMES.md §The worker, §Worker protocol) --------------------------------
class _Worker:
    """One worker child and the bytes read from it so far; used only under the client's lock."""

    def __init__(self, command: list[str]) -> None:
        # Nothing from Hermes's environment; a small young generation (docs/BENCHMARKS.md); its own session.
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env={"NODE_OPTIONS": "--max-semi-space-size=2"}, cwd="/", bufsize=0,
                                     start_new_session=True)
        self.buffer = bytearray()
        self.abandoned: set[str] = set()  # ids of timed-out requests whose replies are dropped when they come
        self.silent_since: float | None = None  # since when nothing came while requests were outstanding
        for stream in (self.proc.stdin, self.proc.stdout):
            os.set_blocking(stream.fileno(), False)
        threading.Thread(target=self._forward_stderr, daemon=True).start()

    def _forward_stderr(self) -> None:
        # The worker logs only what an operator should act on (a reason code, its remedy): warnings, bounded per line.
        with contextlib.suppress(Exception), self.proc.stderr as stream:
            for line in iter(stream.readline, b""):
                if text := line[:512].decode("utf-8", "replace").rstrip():
                    logger.warning("worker: %s", text)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stuck(self) -> bool:
        return self.silent_since is not None and time.monotonic() - self.silent_since >= STUCK_SECONDS

    def abandon(self, request_id: str, sent_at: float) -> None:
        self.abandoned.add(request_id)
        self.silent_since = sent_at if self.silent_since is None else self.silent_since

    def _ready(self, stream, events: int, deadline: float) -> bool:
        # The default selector (epoll, kqueue or poll) has no FD_SETSIZE limit (a busy Hermes holds > 1024 fds).
        if (remaining := deadline - time.monotonic()) <= 0:
            raise _Refused("worker_timeout")
        with selectors.DefaultSelector() as selector:
            selector.register(stream.fileno(), events)
            return bool(selector.select(remaining))

    def send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            try:
                if self._ready(self.proc.stdin, selectors.EVENT_WRITE, deadline):
                    view = view[os.write(self.proc.stdin.fileno(), view):]
            except BlockingIOError:
                continue
            except OSError as exc:  # EPIPE: the worker is gone
                raise self._ended() from exc

    def receive_line(self, deadline: float) -> bytes:
        while (newline := self.buffer.find(b"\n")) == -1:
            if len(self.buffer) > MAX_LINE_BYTES:
                raise _Refused("worker_protocol")
            if not self._ready(self.proc.stdout, selectors.EVENT_READ, deadline):
                continue
            try:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
            except BlockingIOError:
                continue
            except OSError as exc:
                raise self._ended() from exc
            if not chunk:
                raise self._ended()
            self.buffer += chunk
        line = bytes(self.buffer[:newline])
        del self.buffer[: newline + 1]
        self.silent_since = time.monotonic() if self.abandoned else None  # any line is a sign of life
        return line

    def _ended(self) -> _Refused:
        """Why the worker went away: the launch gate refused its program, or it crashed."""
        code = None
        with contextlib.suppress(Exception):
            code = self.proc.wait(timeout=2)
        return _Refused("worker_program_untrusted" if code == UNTRUSTED_EXIT else "worker_crashed")

    def stop(self) -> None:
        for step in (self.proc.stdin.close, self.proc.stdout.close, self.proc.kill, lambda: self.proc.wait(timeout=5)):
            with contextlib.suppress(Exception):
                step()


def _await_reply(worker: _Worker, request_id: str, deadline: float) -> dict:
    """Our reply's result, late replies to abandoned requests skipped (docs/HERMES.md §Worker protocol)."""
    while True:
        try:
            reply = json.loads(worker.receive_line(deadline).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise _Refused("worker_protocol") from exc
        reply_id = reply.get("id") if isinstance(reply, dict) else None
        if not isinstance(reply_id, str) or reply_id not in worker.abandoned:
            break
        worker.abandoned.discard(reply_id)
        worker.silent_since = time.monotonic() if worker.abandoned else None
        logger.info("memory-bridge: dropped a late reply")
    result = reply.get("result") if isinstance(reply, dict) else None
    if (not isinstance(result, dict) or set(reply) != {"v", "id", "result"} or type(reply["v"]) is not int
            or reply["v"] != 1 or reply_id != request_id or not isinstance(result.get("ok"), bool)
            or worker.buffer):  # fmt: skip
        raise _Refused("worker_protocol")  # a bad envelope, or a second line: one request, one reply
    worker.abandoned.clear()
    worker.silent_since = None
    return result


class _WorkerClient:
    """Sends one request at a time to a lazily started worker; thread-safe (one lock around the pipe)."""

    def __init__(self, directory: str) -> None:
        self._directory = directory
        self._lock = threading.Lock()
        self._worker: _Worker | None = None

    def call(self, tool: str, args, signals: dict, timeout: float = math.inf, wait: bool = True) -> dict | None:
        """One request → its result (``timeout`` lowers the call's seconds; ``wait`` False: sent only, None)."""
        request_id = uuid.uuid4().hex
        # "v" and "id" first: the worker can still answer a line too long to parse by reading its start.
        request = {"v": 1, "id": request_id, "tool": tool, "args": args, "hermes": signals}
        try:
            line = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
            raise _BadArguments() from exc  # an object, NaN, a lone surrogate: no valid request holds them
        if len(line) > MAX_LINE_BYTES:
            raise _Refused("request_too_large")
        node, cli, record_timeout = _load_install_record(self._directory)
        # The wait for the lock counts against the deadline: concurrent calls must not queue without bound.
        deadline = time.monotonic() + min(_timeout_seconds(os.environ.get(TIMEOUT_ENV), record_timeout), timeout)
        if not self._lock.acquire(timeout=max(deadline - time.monotonic(), 0)):
            raise _Refused("worker_busy")
        try:
            worker = self._worker
            if worker is not None and (not worker.alive() or worker.stuck()):
                if worker.alive():
                    logger.warning("memory-bridge worker silent too long; restarting it")
                self._drop()
            if self._worker is None:
                try:
                    self._worker = _Worker(_program(node, cli))
                except OSError as exc:
                    raise _Refused("worker_start_failed") from exc
            worker, sent_at = self._worker, None
            try:
                worker.send(line + b"\n", deadline)
                sent_at = time.monotonic()
                if not wait:
                    worker.abandon(request_id, sent_at)
                    return None
                return _await_reply(worker, request_id, deadline)
            except BaseException as exc:
                # Only a late answer keeps the worker (it may be building a large index); its reply is dropped by id.
                if isinstance(exc, _Refused) and exc.reason == "worker_timeout" and sent_at is not None:
                    worker.abandon(request_id, sent_at)
                    if len(worker.abandoned) <= MAX_ABANDONED:
                        raise
                self._drop()  # a crash, a bad reply, a partial write: the next call starts a fresh worker
                raise
        finally:
            self._lock.release()

    def _drop(self) -> None:
        """Stop the worker, if any; the next call starts a fresh one."""
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def close(self) -> None:
        with self._lock:
            self._drop()


# -- What Hermes calls ----------------------------------------------------------------------------------------------
class _Handlers:
    """What Hermes calls: each reads the call's signals, forwards one request and never raises into Hermes."""

    def __init__(self, ctx, registered_home, client: _WorkerClient) -> None:
        self.signals = functools.partial(_signals, ctx, registered_home)
        self.client = client

    def forward(self, name: str, args, timeout: float = math.inf, wait: bool = True) -> dict | None:
        """The worker's result, or None with the reason code logged; only _BadArguments passes through."""
        try:
            return self.client.call(name, args, self.signals(), timeout, wait)
        except _BadArguments:
            raise
        except Exception as exc:  # never let a failure escape into Hermes
            reason = exc.reason if isinstance(exc, _Refused) else f"internal ({type(exc).__name__})"
            logger.warning("%s refused: %s (memory-bridge doctor says what to do)", name, reason)
            return None

    def tool(self, tool: str, args, **kwargs) -> str:
        """One tool call → the public JSON string: the worker's result, else UNAVAILABLE or INVALID_ARGUMENTS."""
        try:
            result = self.forward(tool, args)
        except _BadArguments:
            return INVALID_ARGUMENTS
        return UNAVAILABLE if result is None else json.dumps(result, ensure_ascii=False)

    def ask(self, name: str, args: dict) -> dict:
        """A surface's answer, or {} on any failure or after SURFACE_TIMEOUT_SECONDS."""
        try:
            answer = self.forward(name, args, SURFACE_TIMEOUT_SECONDS) or {}
        except _BadArguments:
            answer = {}
        return answer if answer.get("ok") is True else {}

    def context(self, name: str, args: dict) -> str | None:
        text = self.ask(name, args).get("context")
        return text if isinstance(text, str) and text else None

    def pre_llm_call(self, **kwargs):
        """``{"context": <framed recalled notes>}`` for this API call only, or None."""
        context = self.context("hermes_recall", {"message": kwargs.get("user_message")})
        return None if context is None else {"context": context}

    def prompt_section(self, session_info=None) -> str:
        return self.context("hermes_prompt_section", {}) or ""

    def completions(self, query, limit) -> list[dict]:
        items = self.ask("hermes_complete", {"query": query, "limit": limit}).get("items")
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _reference_provider(handlers: _Handlers):
    """An instance of Hermes's context-reference provider class for ``@memory:``; its coroutines run the blocking
    worker call in a thread (asyncio.to_thread copies the caller's context along)."""
    references = importlib.import_module("agent.context_references")

    class _MemoryReferences(references.ContextReferenceProvider):
        prefix = "memory"
        description = "Notes this profile may read (memory-bridge)"

        async def autocomplete(self, query: str, *, limit: int = 10) -> list:
            items = await asyncio.to_thread(handlers.completions, query, limit)
            make = references.ContextCompletionItem
            return [make(str(i.get("text")), str(i.get("display")), str(i.get("meta"))) for i in items]

        async def expand(self, target: str):
            return await asyncio.to_thread(handlers.context, "hermes_expand", {"target": target})

    return _MemoryReferences()


_clients: list[_WorkerClient] = []


@atexit.register
def _close_all() -> None:
    """Stop every worker (at exit, and in tests)."""
    for client in _clients:
        with contextlib.suppress(Exception):
            client.close()


# -- Registration (docs/HERMES.md §Hermes API probe) ---------------------------------------------------------------
# Context helpers every call reads; without one of them no call could be served, so nothing is registered.
REQUIRED_HELPERS = (("hermes_constants", "get_hermes_home"), ("hermes_constants", "get_hermes_home_override"),
                    ("agent.secret_scope", "is_multiplex_active"),
                    ("agent.delegation_context", "is_delegated_child_process_context"),
                    ("gateway.session_context", "get_session_env"))


def _register_tool_problem(ctx) -> str | None:
    """What stops ``ctx.register_tool(**our keywords)``, as Python's own signature check words it, or None."""
    if not callable(fn := getattr(ctx, "register_tool", None)):
        return "ctx.register_tool"
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # a signature Python cannot read is not held against it
    try:
        signature.bind(name=None, toolset=None, schema=None, handler=None, description=None)  # what we pass
    except TypeError as exc:
        return f"ctx.register_tool: {exc}"
    return None


def _hermes_version() -> str | None:
    """The running Hermes's version (the installed distribution, else ``hermes_cli.__version__``), or None."""
    with contextlib.suppress(Exception):
        return str(importlib.metadata.version("hermes-agent"))
    with contextlib.suppress(Exception):
        version = getattr(importlib.import_module("hermes_cli"), "__version__", None)
        return version if isinstance(version, str) else None
    return None


def probe_hermes_api(ctx) -> dict:
    """What this Hermes offers, as ``hermes-api.json`` holds it (src/hermes/api-report.ts); never raises."""
    problem = _register_tool_problem(ctx)
    modules = {}
    for name in dict.fromkeys(module for module, _ in REQUIRED_HELPERS):
        with contextlib.suppress(Exception):
            modules[name] = importlib.import_module(name)
    helpers = {f"{m}.{h}": callable(getattr(modules.get(m), h, None)) for m, h in REQUIRED_HELPERS}
    missing = [] if problem is None else [problem]
    missing += [f"module {m}" for m in dict.fromkeys(m for m, _ in REQUIRED_HELPERS) if m not in modules]
    missing += [name for name, found in helpers.items() if not found and name.rsplit(".", 1)[0] in modules]
    marker = getattr(modules.get("agent.delegation_context"), "_DELEGATED_CHILD_CONTEXT", None)
    scope_home = getattr(modules.get("agent.secret_scope"), "current_secret_scope_home", None)
    optional = {"ctx.current_cron_execution": callable(getattr(ctx, "current_cron_execution", None)),
                "parent_cron_view": isinstance(marker, contextvars.ContextVar),
                "agent.secret_scope.current_secret_scope_home": callable(scope_home),
                "ctx.profile_name": isinstance(getattr(ctx, "profile_name", None), str)}
    report = {"v": 2, "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "python": "%d.%d.%d" % sys.version_info[:3], "hermes_version": _hermes_version(),
              "register_tool": problem is None, "helpers": helpers, "optional": optional, "missing": missing,
              "registered": not missing, "surfaces": []}  # fmt: skip
    with contextlib.suppress(Exception):  # the home Hermes gives while it loads the plugin, left out if unread
        report["home"] = _raw(modules["hermes_constants"].get_hermes_home())
    return report


def _write_api_report(report: dict) -> None:
    """Replace ``hermes-api.json`` beside this file (mode 0600, written beside it and renamed); best effort."""
    temporary = os.path.join(_HERE, f".{API_REPORT_FILE}.{os.getpid()}.{uuid.uuid4().hex[:8]}")
    try:
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "w") as out:
            json.dump(report, out, indent=2, sort_keys=True)
        os.replace(temporary, os.path.join(_HERE, API_REPORT_FILE))
    except Exception:  # status and doctor then say the report is missing or old
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _register_surfaces(ctx, handlers: _Handlers) -> list[str]:
    """The hook, the @memory: provider and the prompt section, as far as this Hermes offers them; their names."""
    steps = {"pre_llm_call": lambda: ctx.register_hook("pre_llm_call", handlers.pre_llm_call),
             "context_reference": lambda: ctx.register_context_reference(_reference_provider(handlers)),
             "system_prompt_section": lambda: ctx.register_system_prompt_section(
                 "memory-bridge", handlers.prompt_section, max_chars=4000)}  # fmt: skip
    done = []
    for name, step in steps.items():
        try:
            step()
            done.append(name)
        except Exception as exc:
            logger.debug("memory-bridge: %s not registered (%s)", name, type(exc).__name__)
    return done


def register(ctx) -> None:
    """Hermes's entry point: probe and record the API; register nothing (one warning) when a part is missing, else
    the tools, the other surfaces and the warm-up (docs/HERMES.md §Hermes API probe, §Warm first call)."""
    report = probe_hermes_api(ctx)
    if report["missing"]:
        _write_api_report(report)
        logger.warning("memory-bridge: this Hermes lacks %s; the memory_bridge tools are not registered",
                       "; ".join(report["missing"]))  # fmt: skip
        return
    client = _WorkerClient(_HERE)
    _clients.append(client)
    handlers = _Handlers(ctx, report.get("home", _UNREAD), client)
    with open(os.path.join(_HERE, "tools.json"), encoding="utf-8") as listing:
        catalog = json.load(listing)
    for entry in catalog["tools"]:
        ctx.register_tool(name=entry["name"], toolset=catalog["toolset"], schema=entry,
                          handler=functools.partial(handlers.tool, entry["name"]),
                          description=entry["description"])  # fmt: skip
    report["surfaces"] = _register_surfaces(ctx, handlers)
    _write_api_report(report)
    if WARM_UP_ON_REGISTER and os.environ.get(WARM_UP_ENV, "").strip() != "0":
        handlers.forward("warm_up", {}, wait=False)  # Hermes waits for the start only, never for the build
