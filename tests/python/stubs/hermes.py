"""Stub Hermes modules and plugin context for the shim tests.

Hermes's real loader needs Python 3.14 and ruamel.yaml, which the test machines lack, so these stand-ins expose the
same names the shim imports (``hermes_constants``, ``agent.secret_scope``, ``agent.delegation_context``,
``gateway.session_context``) and read their answers from one ``HermesState`` at call time, the way the real helpers
read context variables. ``StubContext`` records ``register_tool`` calls like Hermes's ``plugins validate`` probe.
"""

from __future__ import annotations

import sys
import types

MODULE_NAMES = (
    "hermes_constants",
    "agent",
    "agent.secret_scope",
    "agent.delegation_context",
    "gateway",
    "gateway.session_context",
)

ABSENT = object()


class HermesState:
    """What the stub helpers answer. Change fields between calls to change the calling context."""

    def __init__(self, home: str) -> None:
        self.home = home  # HERMES_HOME of the process
        self.override = None  # per-task home override (get_hermes_home_override)
        self.multiplex = False  # is_multiplex_active()
        self.scope_home = ABSENT  # current_secret_scope_home(): ABSENT = the helper does not exist (older Hermes)
        self.delegated = False  # is_delegated_child_process_context()
        self.session_env: dict[str, str] = {}  # get_session_env(name)
        self.raise_from: str | None = None  # name of a helper that raises RuntimeError when called
        self.missing_modules: set[str] = set()  # modules that fail to import
        self.missing_helpers: set[str] = set()  # helpers left out of their module

    def _maybe_raise(self, name: str) -> None:
        if self.raise_from == name:
            raise RuntimeError(f"stub {name} failed")


def install(state: HermesState) -> None:
    """Insert fresh stub modules into sys.modules (a module in ``missing_modules`` becomes unimportable)."""
    uninstall()

    def helper(module, name, fn):
        if name not in state.missing_helpers:
            setattr(module, name, fn)

    constants = types.ModuleType("hermes_constants")

    def get_hermes_home_override():
        state._maybe_raise("get_hermes_home_override")
        return state.override

    def get_hermes_home():
        state._maybe_raise("get_hermes_home")
        from pathlib import Path

        return Path(state.override if state.override else state.home)

    helper(constants, "get_hermes_home_override", get_hermes_home_override)
    helper(constants, "get_hermes_home", get_hermes_home)

    agent = types.ModuleType("agent")
    agent.__path__ = []
    secret_scope = types.ModuleType("agent.secret_scope")

    def is_multiplex_active():
        state._maybe_raise("is_multiplex_active")
        return state.multiplex

    helper(secret_scope, "is_multiplex_active", is_multiplex_active)
    if state.scope_home is not ABSENT:

        def current_secret_scope_home():
            state._maybe_raise("current_secret_scope_home")
            return state.scope_home

        secret_scope.current_secret_scope_home = current_secret_scope_home

    delegation = types.ModuleType("agent.delegation_context")

    def is_delegated_child_process_context():
        state._maybe_raise("is_delegated_child_process_context")
        return state.delegated

    helper(delegation, "is_delegated_child_process_context", is_delegated_child_process_context)

    gateway = types.ModuleType("gateway")
    gateway.__path__ = []
    session_context = types.ModuleType("gateway.session_context")

    def get_session_env(name, default=""):
        state._maybe_raise("get_session_env")
        return state.session_env.get(name, default)

    helper(session_context, "get_session_env", get_session_env)

    modules = {
        "hermes_constants": constants,
        "agent": agent,
        "agent.secret_scope": secret_scope,
        "agent.delegation_context": delegation,
        "gateway": gateway,
        "gateway.session_context": session_context,
    }
    for name, module in modules.items():
        sys.modules[name] = None if name in state.missing_modules else module


def uninstall() -> None:
    for name in MODULE_NAMES:
        sys.modules.pop(name, None)


class StubContext:
    """A plugin context like Hermes's: records registrations; optionally has ``current_cron_execution``."""

    def __init__(self, profile_name: str = "default", cron_helper: bool = True) -> None:
        self.profile_name = profile_name
        self.registrations: list[dict] = []
        self.cron_job = None  # what current_cron_execution() returns (None = not in a cron job)
        self.cron_raises = False
        if cron_helper:
            self.current_cron_execution = self._current_cron_execution

    def _current_cron_execution(self):
        if self.cron_raises:
            raise RuntimeError("stub cron lookup failed")
        return self.cron_job

    def register_tool(self, name, toolset, schema, handler, check_fn=None, requires_env=None, is_async=False,
                      description="", emoji="", override=False):
        self.registrations.append(
            {"name": name, "toolset": toolset, "schema": schema, "handler": handler, "is_async": is_async,
             "description": description}
        )

    def handler(self, name: str):
        for r in self.registrations:
            if r["name"] == name:
                return r["handler"]
        raise KeyError(name)
