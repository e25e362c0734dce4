"""memory-bridge: Hermes Agent plugin shim.

This module runs inside Hermes. It does no searching or reading itself: it registers the two read-only tools,
works out who is calling from Hermes's own per-call context, and forwards each call as one JSON line to a
long-lived ``memory-bridge worker`` child process (Node.js), which applies the profile's policy and trust rules.

Contract (docs/HERMES.md; the public result shapes are docs/TOOLS.md's):

* Tools ``memory_bridge_search({query?, limit?, within?, tags?, modified_after?, modified_before?, sort?})`` and
  ``memory_bridge_read({id | ids, offset?, section?, outline?})`` in the toolset
  ``memory_bridge``. A handler takes ``(args, **kwargs)`` and returns a JSON *string* with exactly the public
  result shapes; it never raises an ``Exception``.
* The caller record ``{"home", "profile", "cron", "subagent"}`` (``profile`` is "" when Hermes names none) is
  built here, per call, from Hermes's context and never from the tool arguments. Whenever that context cannot be
  established without doubt (a module or helper is missing, a signal has an unexpected value, two signals
  disagree, a multiplexed gateway has no bound home, the plugin runs in Hermes's separate plugin-host process),
  the answer is ``unavailable``.
* Request line: ``{"v": 1, "id", "tool", "args", "caller"}``; reply line: ``{"v": 1, "id", "result"}``. A
  crash, end of file, a malformed or mismatched reply give ``unavailable`` and the worker is stopped; the next
  call starts a fresh one. A timeout gives ``unavailable`` for that call only: the worker is kept (it may be
  building a large index) and its late reply, recognised by the request id, is discarded when it arrives. A
  worker that has sent nothing at all for ``STUCK_SECONDS`` while requests were outstanding is replaced.
* The per-call timeout is ``MEMORY_BRIDGE_TIMEOUT`` (seconds) from the environment, else ``timeout_seconds`` in
  install.json, else ``CALL_TIMEOUT_SECONDS``; always clamped to [MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS].

Only the Python standard library is used (Python 3.11 or newer).
"""

from __future__ import annotations

import atexit
import contextvars
import hashlib
import importlib
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

TOOLSET = "memory_bridge"
SEARCH_TOOL = "memory_bridge_search"
READ_TOOL = "memory_bridge_read"

# Seconds one call may take from sending the request to receiving the reply (a worker start included), unless
# MEMORY_BRIDGE_TIMEOUT or install.json's timeout_seconds says otherwise; any setting is clamped to the bounds.
CALL_TIMEOUT_SECONDS = 10.0
MIN_TIMEOUT_SECONDS = 0.5
MAX_TIMEOUT_SECONDS = 600.0
TIMEOUT_ENV = "MEMORY_BRIDGE_TIMEOUT"
# Seconds a Hermes surface (the pre_llm_call recall, an @memory: autocomplete or expansion, the prompt section) waits
# for the worker before it gives up and answers nothing, so that memory never holds up a turn for long.
SURFACE_TIMEOUT_SECONDS = 3.0
# The worker's request names of the surfaces (src/hermes/surfaces.ts).
RECALL = "hermes_recall"
COMPLETE = "hermes_complete"
EXPAND = "hermes_expand"
PROMPT_SECTION = "hermes_prompt_section"
# The prefix of @memory: references and the id of the prompt section.
REFERENCE_PREFIX = "memory"
SECTION_ID = "memory-bridge"
# A worker with requests outstanding that has written nothing for this long is taken to be hung and replaced.
STUCK_SECONDS = 120.0
# Most timed-out requests whose late replies are still awaited; past this the worker is replaced.
MAX_ABANDONED = 64
# Longest request or reply line, in bytes without the newline (docs/HERMES.md, "Worker protocol").
MAX_LINE_BYTES = 1 << 20
# Largest install.json accepted.
MAX_INSTALL_RECORD_BYTES = 64 * 1024
# Marker written by `memory-bridge install` into install.json.
INSTALL_MARKER = "memory-bridge-plugin"

# The input schemas: the same JSON Schema the MCP server advertises (src/tools/schemas.ts); a test compares them.
SEARCH_PARAMETERS = {'type': 'object',
 'properties': {'query': {'type': 'string',
                          'minLength': 1,
                          'maxLength': 500,
                          'description': 'Words to look for in the notes this profile may read. May be left '
                                         'out when within, tags, modified_after or modified_before is given: '
                                         'then the matching notes come newest first.'},
                'limit': {'type': 'integer',
                          'minimum': 1,
                          'maximum': 10,
                          'description': 'Most results to return (default set by the operator; a value above '
                                         'the policy max_results is lowered to it).'},
                'within': {'type': 'array',
                           'minItems': 1,
                           'maxItems': 8,
                           'items': {'type': 'string', 'minLength': 1, 'maxLength': 256},
                           'description': 'Optional: only search notes whose id matches one of these glob '
                                          'patterns, e.g. ["decisions/**", "projects/*.md"]. * stays inside '
                                          'a folder, ** spans folders, {a,b} alternatives, [a-z] classes; '
                                          'case-insensitive. It only narrows what you may see, never widens '
                                          'it.'},
                'tags': {'type': 'array',
                         'minItems': 1,
                         'maxItems': 8,
                         'items': {'type': 'string', 'minLength': 1, 'maxLength': 129},
                         'description': 'Optional: only notes carrying every one of these tags (front matter '
                                        'tags or inline #tag; case-insensitive; "project" also matches '
                                        '#project/alpha), e.g. ["pricing"].'},
                'modified_after': {'type': 'string',
                                   'minLength': 10,
                                   'maxLength': 35,
                                   'pattern': '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})?)?$',
                                   'description': 'Optional: only notes modified at or after this ISO 8601 '
                                                  'date or date-time, UTC unless an offset is given, e.g. '
                                                  '"2026-11-30" or "2026-11-30T09:00:00+01:00".'},
                'modified_before': {'type': 'string',
                                    'minLength': 10,
                                    'maxLength': 35,
                                    'pattern': '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2})?)?$',
                                    'description': 'Optional: only notes modified before this ISO 8601 date '
                                                   'or date-time, e.g. "2026-12-01".'},
                'sort': {'type': 'string',
                         'enum': ['relevance', 'modified'],
                         'description': 'Optional: "relevance" (default) or "modified" (newest first, ties '
                                        'by id).'}},
 'additionalProperties': False}

READ_PARAMETERS = {'type': 'object',
 'properties': {'id': {'type': 'string',
                       'minLength': 1,
                       'maxLength': 512,
                       'description': 'A document id exactly as memory_bridge_search returned it '
                                      '(root-relative path).'},
                'ids': {'type': 'array',
                        'minItems': 1,
                        'maxItems': 5,
                        'items': {'type': 'string', 'minLength': 1, 'maxLength': 512},
                        'description': 'Instead of id: read up to 5 notes in one call, e.g. '
                                       '["decisions/pricing.md", "runbook.md"]. Answers come in the order '
                                       'asked, each as a single read would answer, sharing one total_chars '
                                       'budget (each still at most read_chars).'},
                'offset': {'type': 'integer',
                           'minimum': 0,
                           'description': 'Characters (Unicode code points) to skip, default 0 (inside the '
                                          'section when section is given). A cut answer gives next_offset: '
                                          'pass it to read on. Compare version across reads: it changes when '
                                          'the note changed.'},
                'section': {'type': 'string',
                            'minLength': 1,
                            'maxLength': 200,
                            'description': 'Read only the section under this heading (to the next heading of '
                                           'the same or a higher level): its text as shown, e.g. "Rollout '
                                           'plan", or its slug as a link writes it, e.g. "rollout-plan" from '
                                           '[[runbook#Rollout plan]].'},
                'outline': {'const': True,
                            'description': "true: list the note's headings (level, text, offset) instead of "
                                           'its text, at most 200.'}},
 'additionalProperties': False}

TOOL_DESCRIPTIONS = {
    SEARCH_TOOL: (
        "Search the Markdown memory this profile is allowed to see. Returns ids, titles and short snippets. "
        "Pass within (glob patterns such as [\"decisions/**\"]), tags or modified_after/modified_before to "
        "search only part of it: they narrow, never widen. Without query, the matching notes come newest "
        "first."
    ),
    READ_TOOL: (
        "Read one Markdown document by the id that memory_bridge_search returned (or up to 5 with ids). Long notes"
        " come in pieces: pass the next_offset of an answer as offset to read on. outline: true lists the"
        " headings; section reads one heading's section."
    ),
}

_MESSAGES = {
    "invalid_request": "The request is invalid.",
    "unavailable": "Memory is unavailable.",
    "not_found_or_denied": "No readable document has that id.",
}

_HERE = os.path.dirname(os.path.abspath(__file__))


def _error_json(code: str, hint: str | None = None) -> str:
    error = {"code": code, "message": _MESSAGES[code]}
    if code == "invalid_request" and hint is not None:
        error["hint"] = hint
    return json.dumps({"ok": False, "error": error}, ensure_ascii=False)


class _Refused(Exception):
    """The call cannot go ahead; ``reason`` is a short code for the operator log (never shown to the model)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _BadArguments(Exception):
    """The tool arguments cannot be written as JSON at all."""


# --------------------------------------------------------------------------------------------------------------
# Who is calling (docs/HERMES.md, "Who is calling")
# --------------------------------------------------------------------------------------------------------------

# What the operator should do about each refusal of the shim, logged with the reason code (never with a path; the
# model only ever gets "unavailable"). Every reason the shim refuses for has one: tests/python checks it.
_REMEDIES = {
    "home_symlink": "the profile home is reached through a symbolic link; set HERMES_HOME (or the profile path) to "
    "the real directory, as `realpath` prints it, and restart Hermes",
    "home_relative": "HERMES_HOME is a relative path; set it to an absolute path and restart Hermes",
    "home_mismatch": "the profile home changed since the plugin was registered; restart Hermes",
    "bad_home": "Hermes returned an empty or malformed profile home",
    "context_module_missing": "a Hermes module the plugin reads the caller from could not be imported: upgrade "
    "Hermes and restart it (memory-bridge doctor shows the Hermes API the plugin found)",
    "context_helper_missing": "a Hermes helper the plugin reads the caller from is missing or not callable: upgrade "
    "Hermes and restart it (memory-bridge doctor shows the Hermes API the plugin found)",
    "context_signal_conflict": "Hermes gave a run-kind signal the plugin cannot read without doubt (an unexpected "
    "value or type): upgrade memory-bridge or Hermes so that they match",
    "multiplex_unbound": "this multiplexed gateway call has no profile home bound to it, so no caller can be named: "
    "bind the session to a profile, or update Hermes",
    "plugin_host_process": "Hermes runs plugins in a separate host process, where the caller cannot be told: turn "
    "plugin-host isolation off for memory-bridge, or use memory-bridge mcp (docs/HOSTS.md)",
    "install_record_missing": "install.json is missing: run memory-bridge install --home <home>, then restart Hermes",
    "install_record_invalid": "install.json is damaged: run memory-bridge install --force --home <home>, then "
    "restart Hermes",
    "install_record_untrusted": "install.json must be owned by you (or root) and not group/world-writable: chmod "
    "600, or run memory-bridge install again",
    "worker_program_untrusted": "someone other than you or root could change the program Hermes starts: "
    "memory-bridge doctor --home <home> names the path and the fix",
    "worker_start_failed": "the worker could not be started (the node binary or CLI recorded at install time gone?): "
    "run memory-bridge doctor --home <home>, then memory-bridge install again",
    "worker_crashed": "the worker exited; it is started again on the next call. If it keeps happening, read the "
    "lines starting with worker: in Hermes's log",
    "worker_protocol": "the plugin and the worker disagree about their protocol: run memory-bridge install --home "
    "<home> again, then restart Hermes",
    "worker_timeout": "the worker did not answer in time (a first search of a large tree takes longest): raise the "
    "timeout (memory-bridge install --timeout SECONDS, or MEMORY_BRIDGE_TIMEOUT) or narrow allow",
    "worker_busy": "earlier calls kept the worker busy for the whole timeout: raise the timeout (memory-bridge "
    "install --timeout SECONDS, or MEMORY_BRIDGE_TIMEOUT)",
    "request_too_large": "the tool arguments were over 1 MiB: nothing to fix here unless it keeps happening",
}


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
    """A home as Hermes returns it (str or Path) → normalised absolute path string, or refuse.

    Raises _Refused ``home_relative`` for a relative path (a relative HERMES_HOME: Hermes would read it against
    whatever its working directory is), ``bad_home`` for anything that is not a non-empty path without NUL.
    """
    try:
        text = os.fspath(value)
    except TypeError as exc:
        raise _Refused("bad_home") from exc
    if not isinstance(text, str) or text == "" or "\x00" in text:
        raise _Refused("bad_home")
    if not os.path.isabs(text):
        raise _Refused("home_relative")
    text = os.path.normpath(text)
    if text.startswith("//"):
        text = "/" + text.lstrip("/")
    return text


def _require_real_home(home: str) -> None:
    """Refuse ``home_symlink`` when any component of the absolute, normalised ``home`` is a symbolic link.

    The worker walks the home from ``/`` without following links (docs/HERMES.md, "Who is calling") and would refuse
    it anyway; this names the cause. realpath(3) semantics: a missing tail is left as written and passes here.
    """
    if os.path.realpath(home) != home:
        raise _Refused("home_symlink")


def _optional_home(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, str) and value == "":
        return None
    return _home_path(value)


def _registration_home() -> tuple[str | None, str | None]:
    """The profile home seen while ``register`` runs → (home, None), or (None, reason) when it cannot be used:
    ``home_relative``, ``home_symlink``, ``bad_home``, or ``context_module_missing`` when Hermes gives none."""
    try:
        constants = importlib.import_module("hermes_constants")
        home = _home_path(constants.get_hermes_home())
        _require_real_home(home)
        return home, None
    except _Refused as refusal:
        return None, refusal.reason
    except Exception:
        return None, "context_module_missing"


def _session_value(get_session_env, name: str) -> str:
    """``get_session_env(name)`` as a stripped string ("" when unset); anything but a string is a conflict."""
    value = get_session_env(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise _Refused("context_signal_conflict")
    return value.strip()


# How Hermes itself reads the cron session flag (its approval code: the value as text, stripped and lower-cased,
# is cron when one of these): Hermes binds it as the string "1" or "", some releases as True/False (kept as bools
# by set_session_vars), and operators set it in the environment as "true", "yes" or "on".
_CRON_FLAG_TRUE = frozenset({"1", "true", "yes", "on"})
_CRON_FLAG_FALSE = frozenset({"", "0", "false", "no", "off"})


def _cron_flag(value) -> bool:
    """The session value ``HERMES_CRON_SESSION`` → True (cron) or False, or refuse ``context_signal_conflict``.

    None, a bool, or a string whose stripped, lower-cased form is in ``_CRON_FLAG_TRUE`` / ``_CRON_FLAG_FALSE``
    (Hermes's own reading, docs/HERMES.md "Cron and subagents"); any other value or type is not a signal we
    understand, so the call is refused rather than guessed."""
    if value is None:
        return False
    if value is True or value is False:
        return value
    if not isinstance(value, str):
        raise _Refused("context_signal_conflict")
    text = value.strip().lower()
    if text in _CRON_FLAG_TRUE:
        return True
    if text in _CRON_FLAG_FALSE:
        return False
    raise _Refused("context_signal_conflict")


class _CallerProbe:
    """Builds the caller record for one call from Hermes's context (see the module docstring)."""

    def __init__(self, ctx, registered_home: str | None, registration_reason: str | None = None) -> None:
        self._ctx = ctx
        self._registered_home = registered_home
        self._registration_reason = registration_reason

    def caller(self) -> dict:
        # Hermes's plugin-host isolation runs plugins in a separate process whose context describes the host,
        # not the calling turn: nothing below would be trustworthy there.
        if os.environ.get("HERMES_PLUGIN_HOST_PROCESS", "") not in ("", "0"):
            raise _Refused("plugin_host_process")

        constants = _import("hermes_constants")
        get_home = _helper(constants, "get_hermes_home")
        get_override = _helper(constants, "get_hermes_home_override")
        secret_scope = _import("agent.secret_scope")
        is_multiplex_active = _helper(secret_scope, "is_multiplex_active")
        delegation = _import("agent.delegation_context")
        is_delegated = _helper(delegation, "is_delegated_child_process_context")
        session_context = _import("gateway.session_context")
        get_session_env = _helper(session_context, "get_session_env")

        multiplex = _strict_bool(is_multiplex_active())
        override = _optional_home(get_override())
        if multiplex:
            # One gateway serves several profiles: only the home bound to this call says which one is asking.
            if override is None:
                raise _Refused("multiplex_unbound")
            scope_home_fn = getattr(secret_scope, "current_secret_scope_home", None)
            if scope_home_fn is not None:
                if not callable(scope_home_fn):
                    raise _Refused("context_helper_missing")
                if _optional_home(scope_home_fn()) != override:
                    raise _Refused("context_signal_conflict")
            home = override
            _require_real_home(home)
        else:
            home = _home_path(get_home())
            _require_real_home(home)
            if self._registered_home is None:
                # Name the cause seen at registration (a relative or linked home) rather than a bare mismatch.
                raise _Refused(self._registration_reason or "home_mismatch")
            if home != self._registered_home:
                raise _Refused("home_mismatch")

        subagent = _strict_bool(is_delegated())
        cron = self._cron(get_session_env, delegation, subagent)

        profile = self._profile_name(constants, home, multiplex)
        return {"home": home, "profile": profile, "cron": cron, "subagent": subagent}

    def _cron(self, get_session_env, delegation, subagent: bool) -> bool:
        """True when any cron signal Hermes gives says cron (docs/HERMES.md, "Cron and subagents"):

        1. the session flag ``HERMES_CRON_SESSION`` says cron, read the way Hermes reads it (``_cron_flag``);
        2. ``ctx.current_cron_execution()`` returns an execution; Hermes answers None inside a delegated child, so
           for a subagent it is asked again in a copy of this context with the child marker cleared, which is the
           parent's view (the copy is discarded; nothing of the caller's context changes);
        3. the session platform (``HERMES_SESSION_PLATFORM``) is "cron".

        A signal Hermes does not offer counts as absent; a helper that is there but malformed refuses.
        """
        cron = _cron_flag(get_session_env("HERMES_CRON_SESSION"))

        if _session_value(get_session_env, "HERMES_SESSION_PLATFORM").lower() == "cron":
            cron = True

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
        """Profile name for the worker's logs only, never used for a decision; "" when Hermes gives none (the
        worker protocol requires the field, docs/HERMES.md "Worker protocol")."""
        name = None
        if not multiplex:
            name = getattr(self._ctx, "profile_name", None)
        if not isinstance(name, str) or name == "":
            fn = getattr(constants, "profile_name_for_home", None)
            try:
                name = fn(home) if callable(fn) else None
            except Exception:
                name = None
        if isinstance(name, str) and 0 < len(name) <= 128:
            return name
        return ""


def _child_marker(delegation):
    """Hermes's context variable that marks in-process delegated child execution, or None where it has none."""
    var = getattr(delegation, "_DELEGATED_CHILD_CONTEXT", None)
    return var if isinstance(var, contextvars.ContextVar) else None


def _parent_cron_execution(cron_fn, delegation):
    """``cron_fn()`` as the parent of this delegated child sees it: run in a copy of the current context with the
    child marker set to False. None when the marker is not there (older Hermes, or a child process)."""
    marker = _child_marker(delegation)
    if marker is None:
        return None

    def as_parent():
        marker.set(False)
        return cron_fn()

    return contextvars.copy_context().run(as_parent)


# --------------------------------------------------------------------------------------------------------------
# The worker child (docs/HERMES.md, "Worker protocol" and "Worker program trust")
# --------------------------------------------------------------------------------------------------------------


def _timeout_seconds(env_value, record_value) -> float:
    """The per-call timeout in seconds: the first usable of ``env_value`` (a string from MEMORY_BRIDGE_TIMEOUT) and
    ``record_value`` (install.json's ``timeout_seconds``, a number), else ``CALL_TIMEOUT_SECONDS``; clamped to
    [MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS]. Unparsable, non-finite or boolean values are ignored."""
    for raw in (env_value, record_value):
        if raw is None or isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            continue
        try:
            value = float(raw)
        except (TypeError, ValueError, OverflowError):
            continue
        if not math.isfinite(value):
            continue
        return min(max(value, MIN_TIMEOUT_SECONDS), MAX_TIMEOUT_SECONDS)
    return float(CALL_TIMEOUT_SECONDS)


# The CLI's place inside its package; the part before it is the package directory.
_CLI_IN_PACKAGE = os.sep.join(("", "dist", "src", "cli", "main.js"))
# Most directory entries one program check visits (a generous bound on an operator-installed package tree).
MAX_PROGRAM_ENTRIES = 1_000_000


class _Untrusted(Exception):
    """One object Node would load for the worker fails the trust rule; ``path`` and ``why`` are for tests and
    doctor-style messages, never for the model."""

    def __init__(self, path: str, why: str) -> None:
        super().__init__(why)
        self.path = path
        self.why = why


def _mode_problem(st: os.stat_result, uid: int) -> str | None:
    """Owner root or ``uid``, no group or world write bit (docs/HERMES.md, "Worker program trust")."""
    if st.st_uid not in (uid, 0):
        return "untrusted_owner"
    if st.st_mode & stat.S_IWGRP:
        return "group_writable"
    if st.st_mode & stat.S_IWOTH:
        return "world_writable"
    return None


def _check_directory_chain(directory: str, uid: int) -> None:
    """Each directory from ``directory`` up to ``/`` (lstat, no link followed): owner root or ``uid``, no
    group/world write unless it is a root-owned sticky directory above the first level (such as /tmp).

    Raises _Untrusted, or _Refused ``worker_start_failed`` when a directory cannot be examined."""
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
        directory = parent
        first = False


def _check_file(path: str, uid: int, st: os.stat_result | None = None) -> None:
    """One program file: a regular file (after following a link, whose target's directories are checked too)
    owned by root or ``uid`` without group/world write."""
    try:
        lst = os.lstat(path) if st is None else st
        if stat.S_ISLNK(lst.st_mode):
            target = os.path.realpath(path)
            _check_directory_chain(os.path.dirname(target), uid)
            lst = os.stat(target)
            path = target
    except OSError as exc:
        raise _Refused("worker_start_failed") from exc
    if not stat.S_ISREG(lst.st_mode):
        raise _Untrusted(path, "not_regular")
    problem = _mode_problem(lst, uid)
    if problem is not None:
        raise _Untrusted(path, problem)


def _package_trees(cli: str) -> tuple[str | None, list[str]]:
    """The package directory of ``cli`` and the directories whose whole content Node may load for the worker:
    ``<package>/dist``, ``<package>/node_modules`` and ``<A>/node_modules`` for every directory A above the
    package (Node's module lookup climbs them for bare specifiers). Only directories that exist are listed.
    A CLI outside the ``dist/src/cli/main.js`` layout has no package: (None, [])."""
    if not cli.endswith(_CLI_IN_PACKAGE):
        return None, []
    package = cli[: -len(_CLI_IN_PACKAGE)] or os.sep
    trees = [os.path.join(package, "dist")]
    directory = package
    while True:
        if os.path.basename(directory) != "node_modules":
            candidate = os.path.join(directory, "node_modules")
            if os.path.lexists(candidate):
                trees.append(candidate)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return package, trees


class _TreeWalk:
    """Walks the package trees once: every directory's identity goes into ``digest`` (device, inode, mode, owner,
    mtime and ctime in ns); with ``check_files`` every entry is judged as well. Symbolic links are followed to
    their targets; a target outside the trees has its directory chain checked and, when a directory, is walked
    too. Each directory is visited once (by device and inode), so link cycles end."""

    def __init__(self, uid: int, check_files: bool) -> None:
        self.uid = uid
        self.check_files = check_files
        self.digest = hashlib.sha256()
        self.seen: set[tuple[int, int]] = set()
        self.entries = 0

    def _identity(self, st: os.stat_result) -> None:
        self.digest.update(
            f"{st.st_dev}:{st.st_ino}:{st.st_mode}:{st.st_uid}:{st.st_mtime_ns}:{st.st_ctime_ns};".encode()
        )

    def tree(self, top: str) -> None:
        try:
            st = os.lstat(top)
            if stat.S_ISLNK(st.st_mode):
                self.link(top)
                return
        except OSError as exc:
            raise _Refused("worker_start_failed") from exc
        _check_directory_chain(top, self.uid)
        self.directory(top, st)

    def directory(self, path: str, st: os.stat_result) -> None:
        stack = [(path, st)]
        while stack:
            path, st = stack.pop()
            key = (st.st_dev, st.st_ino)
            if key in self.seen:
                continue
            self.seen.add(key)
            if not stat.S_ISDIR(st.st_mode):
                raise _Untrusted(path, "not_directory")
            problem = _mode_problem(st, self.uid)
            if problem is not None:
                raise _Untrusted(path, problem)
            self._identity(st)
            try:
                with os.scandir(path) as listing:
                    entries = list(listing)
            except OSError as exc:
                raise _Refused("worker_start_failed") from exc
            self.entries += len(entries)
            if self.entries > MAX_PROGRAM_ENTRIES:
                raise _Untrusted(path, "too_many_entries")
            for entry in entries:
                try:
                    if entry.is_symlink():
                        self.link(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, entry.stat(follow_symlinks=False)))
                    elif self.check_files:
                        est = entry.stat(follow_symlinks=False)
                        if stat.S_ISREG(est.st_mode):
                            problem = _mode_problem(est, self.uid)
                            if problem is not None:
                                raise _Untrusted(entry.path, problem)
                        # A FIFO, socket or device is nothing Node would load as code: not judged.
                except OSError as exc:
                    raise _Refused("worker_start_failed") from exc

    def link(self, path: str) -> None:
        """A symbolic link inside a tree: judge what it points to (a dangling link loads nothing)."""
        target = os.path.realpath(path)
        try:
            st = os.lstat(target)
        except FileNotFoundError:
            return
        self._identity(st)
        if stat.S_ISDIR(st.st_mode):
            if (st.st_dev, st.st_ino) not in self.seen:
                _check_directory_chain(os.path.dirname(target), self.uid)
                self.directory(target, st)
        elif self.check_files:
            _check_directory_chain(os.path.dirname(target), self.uid)
            _check_file(target, self.uid, st)


class _ProgramTrust:
    """Decides whether the worker program may be started (docs/HERMES.md, "Worker program trust").

    Everything Node would load for ``<node> <cli> worker`` must be owned by root or the running user and not be
    group- or world-writable: the node binary and the CLI (links followed), every directory above them, the
    package's ``package.json``, and every file and directory under the package's ``dist/`` and the
    ``node_modules`` directories Node may search (see ``_package_trees``), with every directory above those.
    Mode bits only (lstat/stat); ``memory-bridge doctor`` also reads ACLs.

    A passing verdict is remembered with the digest of the trees' directory identities. Before a later start only
    the directories are walked again: an entry can only be added, removed or replaced through a directory (which
    moves its mtime), and only an object's owner (this user or root) can change its mode or owner (which moves a
    directory's ctime when it is a directory). Any difference walks every file again.
    """

    def __init__(self) -> None:
        self._passed: dict[tuple[str, str], bytes] = {}
        self.full_walks = 0  # how many times every file was judged (tests read it)

    def check(self, node: str, cli: str) -> None:
        """Raise _Refused ``worker_program_untrusted`` (or ``worker_start_failed``) unless the program may run."""
        try:
            self._check(node, cli)
        except _Untrusted as untrusted:
            logger.warning("memory-bridge worker program refused: %s", untrusted.why)
            raise _Refused("worker_program_untrusted") from untrusted

    def _check(self, node: str, cli: str) -> None:
        uid = os.geteuid()
        for program in (node, cli):
            _check_directory_chain(os.path.dirname(program), uid)
            _check_file(program, uid)
        package, trees = _package_trees(cli)
        if package is None:
            return
        manifest = os.path.join(package, "package.json")
        if os.path.lexists(manifest):
            _check_file(manifest, uid)
        key = (node, cli)
        known = self._passed.pop(key, None)
        if known is not None:
            walk = _TreeWalk(uid, check_files=False)
            for top in trees:
                walk.tree(top)
            if walk.digest.digest() == known:
                self._passed[key] = known
                return
        walk = _TreeWalk(uid, check_files=True)
        self.full_walks += 1
        for top in trees:
            walk.tree(top)
        self._passed[key] = walk.digest.digest()


def _load_install_record(directory: str) -> tuple[str, str, object]:
    """Read install.json next to this file → (node, cli, timeout_seconds or None), or refuse.

    The record decides which program runs, so it must be a regular file owned by this user (or root) that nobody
    else can write, exactly as `memory-bridge install` leaves it.
    """
    path = os.path.join(directory, "install.json")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _Refused("install_record_missing") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _Refused("install_record_untrusted")
        if st.st_uid not in (os.geteuid(), 0) or st.st_mode & 0o022:
            raise _Refused("install_record_untrusted")
        if st.st_size > MAX_INSTALL_RECORD_BYTES:
            raise _Refused("install_record_invalid")
        raw = b""
        while len(raw) <= MAX_INSTALL_RECORD_BYTES:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            raw += chunk
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


class _Worker:
    """One `memory-bridge worker` child and the bytes read from it so far. Used only under the client's lock."""

    def __init__(self, node: str, cli: str) -> None:
        # A minimal environment: no PATH, no secrets, nothing from the Hermes process. The paths are absolute. The one
        # variable set is a small young generation, which keeps the long-lived worker's resident memory down
        # (docs/BENCHMARKS.md); node reads it from NODE_OPTIONS.
        self.proc = subprocess.Popen(
            [node, cli, "worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={"NODE_OPTIONS": "--max-semi-space-size=2"},
            cwd="/",
            bufsize=0,
            close_fds=True,
            start_new_session=True,  # a Ctrl-C in Hermes's terminal must not kill the worker mid-call
        )
        self.buffer = bytearray()
        # Ids of requests whose call timed out: their replies are still due and are dropped when they come.
        self.abandoned: set[str] = set()
        # Since when the worker has written nothing while requests were outstanding (None: nothing outstanding).
        self.silent_since: float | None = None
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
        """True when timed-out requests are outstanding and nothing has arrived for STUCK_SECONDS."""
        return self.silent_since is not None and now - self.silent_since >= STUCK_SECONDS

    def abandon(self, request_id: str, sent_at: float) -> None:
        """Remember a timed-out request so that its late reply is skipped."""
        self.abandoned.add(request_id)
        if self.silent_since is None:
            self.silent_since = sent_at

    @staticmethod
    def _wait(fd: int, events: int, deadline: float) -> bool:
        """Wait until ``fd`` is ready. The default selector (epoll, kqueue or poll) has no FD_SETSIZE limit,
        which matters in a busy Hermes process holding more than 1024 descriptors."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _Refused("worker_timeout")
        with selectors.DefaultSelector() as selector:
            selector.register(fd, events)
            return bool(selector.select(remaining))

    def send(self, data: bytes, deadline: float) -> None:
        fd = self.proc.stdin.fileno()
        view = memoryview(data)
        while view:
            if not self._wait(fd, selectors.EVENT_WRITE, deadline):
                continue
            try:
                written = os.write(fd, view)
            except BlockingIOError:
                continue
            except OSError as exc:  # EPIPE: the worker is gone
                raise _Refused("worker_crashed") from exc
            view = view[written:]

    def receive_line(self, deadline: float) -> bytes:
        fd = self.proc.stdout.fileno()
        while True:
            newline = self.buffer.find(b"\n")
            if newline != -1:
                line = bytes(self.buffer[:newline])
                del self.buffer[: newline + 1]
                # Any line is a sign of life (stale replies included).
                self.silent_since = time.monotonic() if self.abandoned else None
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
                raise _Refused("worker_crashed") from exc
            if not chunk:
                raise _Refused("worker_crashed")  # end of file: the worker exited
            self.buffer += chunk

    def stop(self) -> None:
        proc = self.proc
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except Exception:
                pass
        if proc.poll() is None:
            try:
                proc.kill()
            except Exception:
                pass
        try:
            proc.wait(timeout=5)
        except Exception:
            pass


class _WorkerClient:
    """Sends one request at a time to a lazily started worker; thread-safe (one lock around the pipe)."""

    def __init__(self, directory: str) -> None:
        self._directory = directory
        self._lock = threading.Lock()
        self._worker: _Worker | None = None
        self.trust = _ProgramTrust()
        # Clear while a warm-up is on its way to the worker (_start_warm_up).
        self.warm_up_sent = threading.Event()
        self.warm_up_sent.set()

    def call(self, tool: str, args, caller: dict, timeout: float | None = None, wait: bool = True) -> dict | None:
        """One request and its reply's result; ``timeout`` (seconds) lowers the per-call timeout for this call.
        With ``wait`` False (the warm-up) the reply is not awaited: the request is marked abandoned, so its reply
        is dropped by id when a later call reads, and None is returned."""
        request_id = uuid.uuid4().hex
        # "v" and "id" first: the worker can still answer a request line too long to parse by reading its start.
        request = {"v": 1, "id": request_id, "tool": tool, "args": args, "caller": caller}
        try:
            line = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
            # Arguments that are not JSON (an object, NaN, a lone surrogate): no valid request contains them.
            raise _BadArguments() from exc
        if len(line) > MAX_LINE_BYTES:
            raise _Refused("request_too_large")
        node, cli, record_timeout = _load_install_record(self._directory)
        timeout = min(_timeout_seconds(os.environ.get(TIMEOUT_ENV), record_timeout), timeout or math.inf)
        # The wait for the lock counts against the same deadline: concurrent calls must not queue without bound.
        deadline = time.monotonic() + timeout
        # A call never overtakes the warm-up on its way to the worker: it queues behind it there instead.
        if wait:
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
                self.trust.check(node, cli)
                try:
                    worker = self._worker = _Worker(node, cli)
                except OSError as exc:
                    raise _Refused("worker_start_failed") from exc
            keep = False
            sent_at = None
            try:
                worker.send(line + b"\n", deadline)
                sent_at = time.monotonic()
                if not wait:
                    worker.abandon(request_id, sent_at)
                    keep = True
                    return None
                result = _await_reply(worker, request_id, tool, deadline)
                keep = True
            except _Refused as refusal:
                # A whole request went out and only the answer is late: keep the worker (it may be building a
                # large index) and drop the reply when it comes. A partly written request, by contrast, leaves
                # the pipe in an unknown state.
                if refusal.reason == "worker_timeout" and sent_at is not None:
                    worker.abandon(request_id, sent_at)
                    keep = len(worker.abandoned) <= MAX_ABANDONED
                raise
            finally:
                if not keep:
                    # Crash, a bad reply, a partial write or an interruption: this worker is done; the next
                    # call starts a fresh one.
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


def _await_reply(worker: _Worker, request_id: str, tool: str, deadline: float) -> dict:
    """Read reply lines until the one for ``request_id``; late replies to abandoned requests are skipped.

    The worker answers in order, so once our reply is in, no abandoned reply is still due, and any further bytes
    already buffered are not our protocol."""
    while True:
        reply = _decode_reply(worker.receive_line(deadline))
        reply_id = reply.get("id")
        if isinstance(reply_id, str) and reply_id in worker.abandoned:
            worker.abandoned.discard(reply_id)
            worker.silent_since = time.monotonic() if worker.abandoned else None
            logger.info("memory-bridge: dropped a late reply")
            continue
        result = _parse_reply(reply, request_id, tool)
        worker.abandoned.clear()
        worker.silent_since = None
        if worker.buffer:
            raise _Refused("worker_protocol")  # one request, one reply
        return result


def _decode_reply(line: bytes) -> dict:
    """One reply line → a JSON object, or refuse."""
    try:
        reply = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Refused("worker_protocol") from exc
    if not isinstance(reply, dict):
        raise _Refused("worker_protocol")
    return reply


def _parse_reply(reply: dict, request_id: str, tool: str) -> dict:
    """The result of a decoded reply, or refuse unless it is exactly ``{"v": 1, "id": <ours>, "result": <tool result>}``."""
    if (
        not isinstance(reply, dict)
        or set(reply) != {"v", "id", "result"}
        or type(reply["v"]) is not int
        or reply["v"] != 1
        or reply["id"] != request_id
        or not _valid_result(tool, reply["result"])
    ):
        raise _Refused("worker_protocol")
    return reply["result"]


def _is_count(value) -> bool:
    """True for a JSON integer of at least 0 (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_str(value) -> bool:
    return isinstance(value, str)


def _valid_error(result: dict) -> bool:
    """True when ``result`` is exactly the public error JSON (docs/TOOLS.md §Errors)."""
    error = result.get("error")
    if set(result) != {"ok", "error"} or not isinstance(error, dict):
        return False
    code = error.get("code")
    if code not in _MESSAGES or error.get("message") != _MESSAGES[code]:
        return False
    allowed = {"code", "message", "hint"} if code == "invalid_request" else {"code", "message"}
    if not {"code", "message"} <= set(error) <= allowed:
        return False
    return "hint" not in error or _is_str(error["hint"])


def _valid_text_read(result: dict) -> bool:
    """True when ``result`` is one note's text window (docs/TOOLS.md §Results, memory_bridge_read)."""
    keys = {"ok", "id", "title", "content", "truncated", "offset", "version"}
    if result.get("truncated") is True:
        keys.add("next_offset")
    if "section" in result:
        keys.add("section")
    return (
        set(result) == keys
        and result["ok"] is True
        and _is_str(result["id"])
        and _is_str(result["title"])
        and _is_str(result["content"])
        and isinstance(result["truncated"], bool)
        and _is_count(result["offset"])
        and ("next_offset" not in result or _is_count(result["next_offset"]))
        and _is_str(result["version"])
        and ("section" not in result or _is_str(result["section"]))
    )


def _valid_surface(tool: str, result: dict) -> bool:
    """True when ``result`` is a surface's answer: ``{"ok": true, "context": str | null}`` or, for autocomplete,
    ``{"ok": true, "items": [{"text", "display", "meta"}]}`` (docs/HERMES.md §Worker protocol)."""
    if tool == COMPLETE:
        items = result.get("items")
        return (
            set(result) == {"ok", "items"}
            and isinstance(items, list)
            and all(isinstance(i, dict) and set(i) == {"text", "display", "meta"} and all(map(_is_str, i.values()))
                    for i in items)
        )
    return set(result) == {"ok", "context"} and (result["context"] is None or _is_str(result["context"]))


def _valid_result(tool: str, result) -> bool:
    """True when ``result`` has exactly one of the public result shapes (docs/TOOLS.md §Results) for ``tool``."""
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return False
    if tool in (RECALL, COMPLETE, EXPAND, PROMPT_SECTION):
        return result["ok"] is True and _valid_surface(tool, result)
    if result["ok"] is False:
        return _valid_error(result)
    if tool == SEARCH_TOOL:
        keys = set(result)
        if not {"ok", "results", "truncated"} <= keys <= {"ok", "results", "truncated", "incomplete"}:
            return False
        if not isinstance(result["truncated"], bool) or result.get("incomplete", True) is not True:
            return False
        if not isinstance(result["results"], list):
            return False
        for hit in result["results"]:
            if not isinstance(hit, dict) or not {"id", "snippet"} <= set(hit) <= {"id", "title", "snippet"}:
                return False
            if not all(_is_str(v) for v in hit.values()):
                return False
        return True
    if tool == READ_TOOL:
        if "notes" in result:
            notes = result["notes"]
            return (
                set(result) == {"ok", "notes", "truncated"}
                and isinstance(result["truncated"], bool)
                and isinstance(notes, list)
                and 1 <= len(notes) <= 5
                and all(
                    isinstance(n, dict)
                    and isinstance(n.get("ok"), bool)
                    and (_valid_error(n) if n["ok"] is False else _valid_text_read(n))
                    for n in notes
                )
            )
        if "outline" in result:
            return (
                set(result) == {"ok", "id", "title", "outline", "truncated", "version"}
                and _is_str(result["id"])
                and _is_str(result["title"])
                and isinstance(result["truncated"], bool)
                and _is_str(result["version"])
                and isinstance(result["outline"], list)
                and len(result["outline"]) <= 200
                and all(
                    isinstance(h, dict)
                    and set(h) == {"level", "text", "offset"}
                    and _is_count(h["level"])
                    and 1 <= h["level"] <= 6
                    and _is_str(h["text"])
                    and _is_count(h["offset"])
                    for h in result["outline"]
                )
            )
        return _valid_text_read(result)
    return False


# --------------------------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------------------------


class _Tools:
    def __init__(self, probe: _CallerProbe, client: _WorkerClient) -> None:
        self._probe = probe
        self._client = client

    def handle(self, tool: str, args) -> str:
        """One tool call → the public JSON string. Never raises an Exception."""
        try:
            caller = self._probe.caller()
            result = self._client.call(tool, args, caller)
            return json.dumps(result, ensure_ascii=False)
        except _BadArguments:
            return _error_json("invalid_request", "arguments: a JSON object")
        except _Refused as refusal:
            remedy = _REMEDIES.get(refusal.reason)
            if remedy is None:
                logger.warning("%s refused: %s", tool, refusal.reason)
            else:
                logger.warning("%s refused: %s (%s)", tool, refusal.reason, remedy)
        except Exception as exc:  # never let a failure escape into Hermes's tool loop
            logger.warning("%s refused: internal (%s)", tool, type(exc).__name__)
        try:
            return _error_json("unavailable")
        except Exception:
            return '{"ok": false, "error": {"code": "unavailable", "message": "Memory is unavailable."}}'

    def search(self, args, **kwargs) -> str:
        return self.handle(SEARCH_TOOL, args)

    def read(self, args, **kwargs) -> str:
        return self.handle(READ_TOOL, args)


def _message_text(message) -> str:
    """The text of a user message as Hermes passes it: the string itself, or the text parts of a list of content
    parts (``{"type": "text", "text": ...}``) joined by newlines; "" for anything else."""
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        return "\n".join(
            p["text"] for p in message if isinstance(p, dict) and p.get("type") == "text" and _is_str(p.get("text"))
        )
    return ""


class _Surfaces:
    """Hermes's pre_llm_call hook, the @memory: provider's two methods and the prompt section: each forwards one
    request to the worker, which decides everything (src/hermes/surfaces.ts), and answers nothing on any failure
    or after SURFACE_TIMEOUT_SECONDS, logging a reason code; none ever raises into Hermes."""

    def __init__(self, probe: _CallerProbe, client: _WorkerClient) -> None:
        self._probe = probe
        self._client = client

    def ask(self, name: str, args: dict) -> dict | None:
        try:
            return self._client.call(name, args, self._probe.caller(), SURFACE_TIMEOUT_SECONDS)
        except _Refused as refusal:
            logger.warning("%s gave nothing: %s", name, refusal.reason)
        except Exception as exc:
            logger.warning("%s gave nothing: internal (%s)", name, type(exc).__name__)
        return None

    def context(self, name: str, args: dict) -> str | None:
        answer = self.ask(name, args)
        return answer["context"] if answer is not None and answer["context"] else None

    def pre_llm_call(self, **kwargs):
        """Hermes's pre_llm_call: ``{"context": <framed recalled notes>}`` for this call only, or None."""
        message = _message_text(kwargs.get("user_message"))
        context = self.context(RECALL, {"message": message}) if message.strip() else None
        return None if context is None else {"context": context}

    def prompt_section(self, session_info=None) -> str:
        return self.context(PROMPT_SECTION, {}) or ""


def _reference_provider(surfaces: _Surfaces, references):
    """An instance of Hermes's context-reference provider class (from ``agent.context_references``) for
    ``@memory:``; its coroutines run the blocking worker call in a thread (the caller context copied with it)."""
    import asyncio

    class _MemoryReferences(references.ContextReferenceProvider):
        prefix = REFERENCE_PREFIX
        description = "Notes this profile may read (memory-bridge)"

        async def autocomplete(self, query: str, *, limit: int = 10) -> list:
            args = {"query": query if _is_str(query) else "", "limit": max(1, min(int(limit), 10))}
            answer = await asyncio.to_thread(surfaces.ask, COMPLETE, args)
            items = [] if answer is None else answer["items"]
            return [references.ContextCompletionItem(i["text"], i["display"], i["meta"]) for i in items]

        async def expand(self, target: str):
            if not _is_str(target) or not target:
                return None
            return await asyncio.to_thread(surfaces.context, EXPAND, {"target": target[:1024]})

    return _MemoryReferences()


def _register_surfaces(ctx, surfaces: _Surfaces) -> list[str]:
    """Register the hook, the @memory: provider and the prompt section with what this Hermes offers; the names of
    those registered (for hermes-api.json). A surface Hermes lacks, or refuses, is left out with a debug line."""
    done = []
    steps = (
        ("pre_llm_call", lambda: ctx.register_hook("pre_llm_call", surfaces.pre_llm_call)),
        ("context_reference", lambda: ctx.register_context_reference(
            _reference_provider(surfaces, importlib.import_module("agent.context_references")))),
        ("system_prompt_section", lambda: ctx.register_system_prompt_section(
            SECTION_ID, surfaces.prompt_section, max_chars=4000)),
    )
    for name, step in steps:
        try:
            step()
            done.append(name)
        except Exception as exc:
            logger.debug("memory-bridge: %s not registered (%s)", name, type(exc).__name__)
    return done


_clients: list[_WorkerClient] = []


def _close_all() -> None:
    for client in _clients:
        try:
            client.close()
        except Exception:
            pass


atexit.register(_close_all)


# --------------------------------------------------------------------------------------------------------------
# The Hermes API this shim needs (docs/HERMES.md, "Hermes API probe")
# --------------------------------------------------------------------------------------------------------------

# Keyword arguments register() passes to ctx.register_tool.
REGISTER_KEYWORDS = ("name", "toolset", "schema", "handler", "description")
# Context helpers every call reads; without one of them no call could be served, so nothing is registered.
REQUIRED_HELPERS = (
    ("hermes_constants", "get_hermes_home"),
    ("hermes_constants", "get_hermes_home_override"),
    ("agent.secret_scope", "is_multiplex_active"),
    ("agent.delegation_context", "is_delegated_child_process_context"),
    ("gateway.session_context", "get_session_env"),
)
# Where register() leaves what it found, for `memory-bridge status` and `doctor` (beside install.json).
API_REPORT_FILE = "hermes-api.json"


def _register_tool_problem(ctx) -> str | None:
    """What is wrong with ``ctx.register_tool`` for our call, or None. It must be callable and accept every keyword
    in REGISTER_KEYWORDS (by name or through ``**kwargs``), and must not require a parameter we do not pass. A
    signature Python cannot read (a builtin) is not held against it: the call itself will tell."""
    fn = getattr(ctx, "register_tool", None)
    if not callable(fn):
        return "ctx.register_tool"
    try:
        parameters = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    named = {
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    }
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    missing = [k for k in REGISTER_KEYWORDS if k not in named and not takes_any]
    required = [
        p.name
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind is not inspect.Parameter.VAR_KEYWORD
        and p.kind is not inspect.Parameter.VAR_POSITIONAL
        and p.name not in REGISTER_KEYWORDS
    ]
    if missing:
        return "ctx.register_tool keyword " + ", ".join(missing)
    if required:
        return "ctx.register_tool requires " + ", ".join(required)
    return None


def _hermes_version() -> str | None:
    """The running Hermes's version as it reports it (the installed distribution, else ``hermes_cli.__version__``),
    for the operator's information only; None when neither answers."""
    try:
        import importlib.metadata as metadata

        return str(metadata.version("hermes-agent"))
    except Exception:
        pass
    try:
        module = sys.modules.get("hermes_cli") or importlib.import_module("hermes_cli")
        version = getattr(module, "__version__", None)
        return version if isinstance(version, str) else None
    except Exception:
        return None


def probe_hermes_api(ctx) -> dict:
    """What this Hermes offers the shim → a JSON-ready dict (the shape of ``hermes-api.json``):

    ``{"v": 1, "checked_at": ISO-8601 UTC, "python": "3.x.y", "hermes_version": str | None,
    "register_tool": bool, "helpers": {"module.helper": bool}, "optional": {name: bool}, "missing": [str]}``

    ``missing`` names what stops registration (``ctx.register_tool`` or one of its keywords, a module, a helper);
    ``optional`` lists signals used when present (``ctx.current_cron_execution``, the parent's cron view through
    the delegation marker, ``current_secret_scope_home``, ``ctx.profile_name``). Never raises.
    """
    missing: list[str] = []
    problem = _register_tool_problem(ctx)
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
        found = module is not None and callable(getattr(module, helper, None))
        helpers[f"{module_name}.{helper}"] = found
        if module is not None and not found:
            missing.append(f"{module_name}.{helper}")
    delegation = modules.get("agent.delegation_context")
    secret_scope = modules.get("agent.secret_scope")
    optional = {
        "ctx.current_cron_execution": callable(getattr(ctx, "current_cron_execution", None)),
        "parent_cron_view": delegation is not None and _child_marker(delegation) is not None,
        "agent.secret_scope.current_secret_scope_home": secret_scope is not None
        and callable(getattr(secret_scope, "current_secret_scope_home", None)),
        "ctx.profile_name": isinstance(getattr(ctx, "profile_name", None), str),
    }
    return {
        "v": 1,
        "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": "%d.%d.%d" % sys.version_info[:3],
        "hermes_version": _hermes_version(),
        "register_tool": problem is None,
        "helpers": helpers,
        "optional": optional,
        "missing": missing,
    }


def _write_api_report(directory: str, report: dict) -> None:
    """Replace ``<directory>/hermes-api.json`` with ``report`` (mode 0600, written beside it and renamed into place,
    so a reader never sees half a file). Best effort: a failure is logged at debug level and changes nothing else."""
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


# Warm first call (docs/HERMES.md): when register() has registered the tools, a background thread starts the worker
# and asks it to build the profile's view; a tool call that comes during the build waits for it in the worker.
# MEMORY_BRIDGE_WARM_UP=0 in Hermes's environment turns it off (the first call then builds the view).
WARM_UP_TOOL = "warm_up"
WARM_UP_ENV = "MEMORY_BRIDGE_WARM_UP"
WARM_UP_ON_REGISTER = True


def _start_warm_up(probe: _CallerProbe, client: _WorkerClient) -> None:
    """Send the warm-up for the caller Hermes's context names now, from a daemon thread; never raises."""
    if not WARM_UP_ON_REGISTER or os.environ.get(WARM_UP_ENV, "").strip() == "0":
        return
    try:
        caller = probe.caller()
    except _Refused as refusal:
        logger.info("memory-bridge: no warm-up: %s", refusal.reason)
        return
    except Exception as exc:
        logger.info("memory-bridge: no warm-up: internal (%s)", type(exc).__name__)
        return

    def send() -> None:
        try:
            client.call(WARM_UP_TOOL, {}, caller, wait=False)
        except _Refused as refusal:
            logger.info("memory-bridge: no warm-up: %s", refusal.reason)
        except Exception as exc:
            logger.info("memory-bridge: no warm-up: internal (%s)", type(exc).__name__)
        finally:
            client.warm_up_sent.set()

    client.warm_up_sent.clear()
    try:
        threading.Thread(target=send, name="memory-bridge-warm-up", daemon=True).start()
    except Exception as exc:  # no thread to be had: the first call builds the view
        client.warm_up_sent.set()
        logger.info("memory-bridge: no warm-up: internal (%s)", type(exc).__name__)


def register(ctx) -> None:
    """Hermes plugin entry point: register both tools in the ``memory_bridge`` toolset.

    First probes the Hermes API the shim needs (``probe_hermes_api``) and records what it found in
    ``hermes-api.json`` for ``memory-bridge status`` and ``doctor``. When something required is missing it
    registers nothing and logs one warning naming what is missing (the tools would only ever answer
    ``unavailable``). Once the tools are registered, the warm-up starts in the background (``_start_warm_up``).
    """
    report = probe_hermes_api(ctx)
    registered_home, home_reason = _registration_home()
    report["home_problem"] = home_reason
    report["registered"] = not report["missing"]
    _write_api_report(_HERE, report)
    if report["missing"]:
        logger.warning(
            "memory-bridge: this Hermes lacks %s; the memory_bridge tools are not registered",
            "; ".join(report["missing"]),
        )
        return
    if home_reason is not None:
        remedy = _REMEDIES.get(home_reason, "")
        logger.warning("memory-bridge: every call will be refused: %s (%s)", home_reason, remedy)
    probe = _CallerProbe(ctx, registered_home, home_reason)
    client = _WorkerClient(_HERE)
    _clients.append(client)
    report["surfaces"] = _register_surfaces(ctx, _Surfaces(probe, client))
    _write_api_report(_HERE, report)
    tools = _Tools(probe, client)
    for name, parameters, handler in (
        (SEARCH_TOOL, SEARCH_PARAMETERS, tools.search),
        (READ_TOOL, READ_PARAMETERS, tools.read),
    ):
        description = TOOL_DESCRIPTIONS[name]
        schema = {"name": name, "description": description, "parameters": json.loads(json.dumps(parameters))}
        ctx.register_tool(
            name=name,
            toolset=TOOLSET,
            schema=schema,
            handler=handler,
            description=description,
        )
    _start_warm_up(probe, client)
