"""Stand-ins for the parts of Hermes Agent the shim touches, for the shim tests.

Hermes's real loader needs Python 3.14 and ruamel.yaml, which the test machines lack. These stubs are written
from reading Hermes Agent's own plugin context, tool registry, manifest version gate, session context, delegation
context, secret scope, home constants and cron execution identity (release 0.21.3 and its later main branch), and
keep their names, signatures, return types and the behaviour the shim depends on:

* ``PluginContext.register_tool(name, toolset, schema, handler, check_fn=None, requires_env=None, is_async=False,
  description="", emoji="", override=False)`` stores a tool entry in a registry; ``profile_name`` is a property;
  ``current_cron_execution()`` answers what ``cron.execution_identity.current_cron_execution()`` answers.
* ``ToolRegistry.dispatch(name, args, *, scope=None, **kwargs)`` calls ``handler(args, **kwargs)`` and normalises
  the result: a string passes, a multimodal envelope passes, any other value becomes a JSON error string, and an
  exception becomes ``{"error": "Tool execution failed: <type>: <text>"}``.
* The manifest gate: ``requires_hermes`` (comparator clauses joined by commas, a bare version meaning ``>=``,
  versions cut to three numeric parts, an unparsable running version passing) is compared with the running version
  before the plugin's module is imported; an unmet floor records ``requires hermes <spec>, running <version>`` and
  skips the plugin.
* Session values are context variables that fall back to ``os.environ`` while unset here; the delegated-child
  marker is a context variable (``_DELEGATED_CHILD_CONTEXT``) or the environment marker
  ``HERMES_DELEGATED_CHILD_CONTEXT``; the current cron execution is a context variable that delegated children
  read as ``None``.

``HermesState`` holds what is not context-local (HERMES_HOME, the per-task override, multiplexing) and lets a test
remove modules or helpers, or make a helper raise.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import importlib.util
import json
import os
import re
import sys
import types
from pathlib import Path

from . import surfaces

MODULE_NAMES = (
    "hermes_constants",
    "agent",
    "agent.secret_scope",
    "agent.delegation_context",
    "gateway",
    "gateway.session_context",
    "cron",
    "cron.execution_identity",
    "hermes_cli",
    "agent.context_references",
)

ABSENT = object()
_UNSET = object()

DELEGATED_CHILD_ENV_MARKER = "HERMES_DELEGATED_CHILD_CONTEXT"


class HermesState:
    """What the stub helpers answer that is not context-local. Change fields between calls."""

    def __init__(self, home: str) -> None:
        self.home = home  # HERMES_HOME of the process (str; may be relative, like a real environment variable)
        self.override = None  # per-task home override (get_hermes_home_override)
        self.multiplex = False  # is_multiplex_active()
        self.scope_home = ABSENT  # current_secret_scope_home(): ABSENT = the helper does not exist (older Hermes)
        self.raise_from: str | None = None  # name of a helper that raises RuntimeError when called
        self.missing_modules: set[str] = set()  # modules that fail to import
        self.missing_helpers: set[str] = set()  # helpers left out of their module
        self.child_marker = True  # agent.delegation_context exposes _DELEGATED_CHILD_CONTEXT
        self.version = "0.21.3"  # what running_hermes_version() answers

    def _maybe_raise(self, name: str) -> None:
        if self.raise_from == name:
            raise RuntimeError(f"stub {name} failed")


# -- context variables (one set per process, like Hermes's module globals) ------------------------------------

_DELEGATED_CHILD_CONTEXT: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "hermes_delegated_child_context", default=False
)

_SESSION_NAMES = (
    "HERMES_SESSION_PLATFORM",
    "HERMES_SESSION_SOURCE",
    "HERMES_SESSION_CHAT_ID",
    "HERMES_SESSION_KEY",
    "HERMES_SESSION_ID",
    "HERMES_SESSION_PROFILE",
    "HERMES_CRON_SESSION",
)
_SESSION_VARS = {name: contextvars.ContextVar(name, default=_UNSET) for name in _SESSION_NAMES}


@dataclasses.dataclass(frozen=True)
class CronExecution:
    """The identity of one cron fire, as ``current_cron_execution()`` returns it."""

    job_id: str
    job_name: str
    execution_id: str
    source: str
    scheduled_instant: str | None
    started_at: str | None
    profile: str


_CURRENT_CRON: contextvars.ContextVar[CronExecution | None] = contextvars.ContextVar(
    "hermes_cron_execution", default=None
)


def _is_delegated_child_context() -> bool:
    return bool(_DELEGATED_CHILD_CONTEXT.get())


def _current_cron_execution() -> CronExecution | None:
    return None if _is_delegated_child_context() else _CURRENT_CRON.get()


# -- helpers a test uses to set the calling context -------------------------------------------------------------


@contextlib.contextmanager
def delegated_child():
    """Run the body as Hermes runs an in-process delegate_task child (the context marker set)."""
    token = _DELEGATED_CHILD_CONTEXT.set(True)
    try:
        yield
    finally:
        _DELEGATED_CHILD_CONTEXT.reset(token)


@contextlib.contextmanager
def cron_execution(job_id: str = "job-1"):
    """Run the body inside a cron fire (what the scheduler binds before it runs the job's agent)."""
    token = _CURRENT_CRON.set(
        CronExecution(
            job_id=job_id,
            job_name=job_id,
            execution_id=f"{job_id}-exec",
            source="builtin",
            scheduled_instant=None,
            started_at=None,
            profile="default",
        )
    )
    try:
        yield
    finally:
        _CURRENT_CRON.reset(token)


@contextlib.contextmanager
def session(**values: object):
    """Bind session values by their legacy names, e.g. ``session(HERMES_CRON_SESSION="1")``."""
    tokens = [(_SESSION_VARS[name], _SESSION_VARS[name].set(value)) for name, value in values.items()]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


# -- the modules -----------------------------------------------------------------------------------------------


def install(state: HermesState) -> None:
    """Insert fresh stub modules into sys.modules (a module in ``missing_modules`` becomes unimportable)."""
    uninstall()

    def helper(module, name, fn):
        if name not in state.missing_helpers:
            setattr(module, name, fn)

    constants = types.ModuleType("hermes_constants")

    def get_hermes_home_override() -> str | None:
        state._maybe_raise("get_hermes_home_override")
        return str(state.override) if state.override else None

    def get_hermes_home() -> Path:
        state._maybe_raise("get_hermes_home")
        override = get_hermes_home_override()
        return Path(override) if override else Path(state.home)

    helper(constants, "get_hermes_home_override", get_hermes_home_override)
    helper(constants, "get_hermes_home", get_hermes_home)

    agent = types.ModuleType("agent")
    agent.__path__ = []
    secret_scope = types.ModuleType("agent.secret_scope")

    def is_multiplex_active() -> bool:
        state._maybe_raise("is_multiplex_active")
        return state.multiplex

    helper(secret_scope, "is_multiplex_active", is_multiplex_active)
    if state.scope_home is not ABSENT:

        def current_secret_scope_home():
            state._maybe_raise("current_secret_scope_home")
            return state.scope_home

        secret_scope.current_secret_scope_home = current_secret_scope_home

    delegation = types.ModuleType("agent.delegation_context")
    delegation.DELEGATED_CHILD_ENV_MARKER = DELEGATED_CHILD_ENV_MARKER
    if state.child_marker:
        delegation._DELEGATED_CHILD_CONTEXT = _DELEGATED_CHILD_CONTEXT

    def is_delegated_child_context() -> bool:
        return _is_delegated_child_context()

    def is_delegated_child_process_context() -> bool:
        state._maybe_raise("is_delegated_child_process_context")
        return _is_delegated_child_context() or bool(os.environ.get(DELEGATED_CHILD_ENV_MARKER))

    helper(delegation, "is_delegated_child_context", is_delegated_child_context)
    helper(delegation, "is_delegated_child_process_context", is_delegated_child_process_context)

    gateway = types.ModuleType("gateway")
    gateway.__path__ = []
    session_context = types.ModuleType("gateway.session_context")

    def get_session_env(name: str, default: str = "") -> str:
        state._maybe_raise("get_session_env")
        var = _SESSION_VARS.get(name)
        if var is not None:
            value = var.get()
            if value is not _UNSET:
                return value
        return os.getenv(name, default)

    helper(session_context, "get_session_env", get_session_env)

    cron = types.ModuleType("cron")
    cron.__path__ = []
    execution_identity = types.ModuleType("cron.execution_identity")
    execution_identity.CronExecution = CronExecution
    execution_identity.current_cron_execution = _current_cron_execution

    hermes_cli = types.ModuleType("hermes_cli")
    hermes_cli.__path__ = []
    hermes_cli.__version__ = state.version

    modules = {
        "hermes_cli": hermes_cli,
        "hermes_constants": constants,
        "agent": agent,
        "agent.secret_scope": secret_scope,
        "agent.delegation_context": delegation,
        "gateway": gateway,
        "gateway.session_context": session_context,
        "cron": cron,
        "cron.execution_identity": execution_identity,
        "agent.context_references": surfaces.context_references_module(),
    }
    for name, module in modules.items():
        sys.modules[name] = None if name in state.missing_modules else module


def uninstall() -> None:
    for name in MODULE_NAMES:
        sys.modules.pop(name, None)


# -- tool registry ---------------------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False)
class ToolEntry:
    name: str
    toolset: str
    schema: dict
    handler: object
    check_fn: object
    requires_env: list
    is_async: bool
    description: str
    emoji: str


def tool_error(message, **extra) -> str:
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False)


class ToolRegistry:
    """The registry calls the shim depends on: ``register`` and ``dispatch`` with its result normalisation."""

    def __init__(self) -> None:
        self.tools: dict[str, ToolEntry] = {}

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict,
        handler,
        check_fn=None,
        requires_env: list | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars=None,
        dynamic_schema_overrides=None,
        override: bool = False,
        scope: str | None = None,
    ) -> None:
        if not isinstance(schema, dict):
            raise ValueError(f"Tool {name!r}: schema must be a dict")
        params = schema.get("parameters")
        if params is not None and not isinstance(params, dict):
            raise ValueError(f"Tool {name!r}: schema['parameters'] must be an object")
        existing = self.tools.get(name)
        if existing is not None and existing.toolset != toolset and not override:
            return
        self.tools[name] = ToolEntry(
            name=name,
            toolset=toolset,
            schema=schema,
            handler=handler,
            check_fn=check_fn,
            requires_env=requires_env or [],
            is_async=is_async,
            description=description or schema.get("description", ""),
            emoji=emoji,
        )

    @staticmethod
    def _normalize_handler_result(name: str, result):
        if isinstance(result, str):
            return result
        if isinstance(result, dict) and result.get("_multimodal") is True and isinstance(result.get("content"), list):
            return result
        kind = type(result).__name__
        return tool_error(
            f"Tool handler returned unsupported result type: {kind}",
            error_type="tool_result_contract",
            tool=name,
            result_type=kind,
        )

    def dispatch(self, name: str, args: dict, *, scope: str | None = None, **kwargs):
        entry = self.tools.get(name)
        if entry is None:
            return tool_error(f"Unknown tool: {name}")
        try:
            return self._normalize_handler_result(name, entry.handler(args, **kwargs))
        except Exception as exc:
            return tool_error(f"Tool execution failed: {type(exc).__name__}: {exc}")


# -- plugin context --------------------------------------------------------------------------------------------


class StubContext(surfaces.SurfaceContextMixin):
    """A plugin context like Hermes's ``PluginContext``: tools go into ``registry``; ``current_cron_execution`` is
    there unless ``cron_helper`` is False (Hermes releases before it existed)."""

    def __init__(self, profile_name: str = "default", cron_helper: bool = True) -> None:
        self._profile_name = profile_name
        self.registry = ToolRegistry()
        self.registrations: list[dict] = []
        self.cron_raises = False
        self._surfaces_init()
        if cron_helper:
            self.current_cron_execution = self._current_cron_execution

    @property
    def profile_name(self) -> str:
        return self._profile_name

    def _current_cron_execution(self):
        if self.cron_raises:
            raise RuntimeError("stub cron lookup failed")
        return _current_cron_execution()

    def register_tool(
        self,
        name: str,
        toolset: str,
        schema: dict,
        handler,
        check_fn=None,
        requires_env: list | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        override: bool = False,
    ):
        self.registry.register(
            name=name,
            toolset=toolset,
            schema=schema,
            handler=handler,
            check_fn=check_fn,
            requires_env=requires_env,
            is_async=is_async,
            description=description,
            emoji=emoji,
            override=override,
        )
        self.registrations.append(
            {
                "name": name,
                "toolset": toolset,
                "schema": schema,
                "handler": handler,
                "is_async": is_async,
                "description": description,
            }
        )
        return None

    def handler(self, name: str):
        for r in self.registrations:
            if r["name"] == name:
                return r["handler"]
        raise KeyError(name)

    def dispatch(self, name: str, args, **kwargs):
        """Call a tool the way Hermes's agent loop does (through the registry, with keyword arguments)."""
        return self.registry.dispatch(name, args, **kwargs)


# -- the manifest gate and loader ------------------------------------------------------------------------------

_COMPARATOR = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(.+?)\s*$")


def version_tuple(text: str) -> tuple[int, int, int] | None:
    """``"v1.2.3-rc1"`` → (1, 2, 3); missing parts are 0; None when a part is not a number."""
    head = re.split(r"[-+]", str(text).strip().lstrip("v"), maxsplit=1)[0].split(".")
    head += ["0"] * (3 - len(head))
    try:
        return tuple(int(part) for part in head[:3])  # type: ignore[return-value]
    except ValueError:
        return None


def version_satisfies(spec: str, current: str) -> bool:
    """Every comma-separated clause of ``spec`` holds for ``current``; a clause without a comparator means
    ``>=``; an unparsable running version, or an unparsable clause target, passes."""
    now = version_tuple(current)
    if now is None:
        return True
    compare = {
        ">=": lambda a, b: a >= b,
        "<=": lambda a, b: a <= b,
        "==": lambda a, b: a == b,
        "!=": lambda a, b: a != b,
        ">": lambda a, b: a > b,
        "<": lambda a, b: a < b,
    }
    for clause in (c.strip() for c in spec.split(",")):
        if not clause:
            continue
        match = _COMPARATOR.match(clause)
        op, target = (match.group(1), match.group(2)) if match else (">=", clause)
        wanted = version_tuple(target)
        if wanted is not None and not compare[op](now, wanted):
            return False
    return True


def requires_hermes_error(manifest: dict, running: str) -> str | None:
    spec = str(manifest.get("requires_hermes") or "").strip()
    if not spec or version_satisfies(spec, running):
        return None
    return f"requires hermes {spec}, running {running}"


def parse_manifest(text: str) -> dict:
    """The subset of YAML plugin manifests use here: ``key: scalar`` lines, ``key: [a, b]`` flow lists of plain
    scalars (``[]`` is empty) and ``key:`` followed by ``  - item`` lines; comments and blank lines are ignored;
    quoted scalars lose their quotes."""
    data: dict = {}
    current_list: list | None = None
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip():
            continue
        if line.startswith("  - ") and current_list is not None:
            current_list.append(_scalar(line[4:]))
            continue
        key, sep, value = line.partition(":")
        if not sep or line.startswith(" "):
            raise ValueError(f"unsupported manifest line: {raw!r}")
        if value.strip() == "":
            current_list = []
            data[key.strip()] = current_list
        else:
            current_list = None
            data[key.strip()] = _flow_list(value) if value.strip().startswith("[") else _scalar(value)
    return data


def _flow_list(text: str) -> list:
    """``[a, b]`` → ["a", "b"] (plain or quoted scalars; ``[]`` → [])."""
    inner = text.strip()
    if not inner.endswith("]"):
        raise ValueError(f"unsupported flow list: {text!r}")
    inner = inner[1:-1].strip()
    return [] if inner == "" else [_scalar(item) for item in inner.split(",")]


def _scalar(text: str):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return text


@dataclasses.dataclass
class LoadedPlugin:
    manifest: dict
    module: types.ModuleType | None = None
    error: str | None = None
    tools_registered: list = dataclasses.field(default_factory=list)


def load_plugin(plugin_dir: Path, state: HermesState, ctx: StubContext, module_name: str) -> LoadedPlugin:
    """Load one directory plugin as Hermes's loader does: parse plugin.yaml, apply the ``requires_hermes`` gate
    against ``state.version`` (skipping before import when it fails), import ``__init__.py`` and call
    ``register(ctx)``; an exception from register is recorded, never raised."""
    manifest = parse_manifest((plugin_dir / "plugin.yaml").read_text(encoding="utf-8-sig"))
    loaded = LoadedPlugin(manifest=manifest)
    reason = requires_hermes_error(manifest, state.version)
    if reason:
        loaded.error = reason
        return loaded
    spec = importlib.util.spec_from_file_location(module_name, plugin_dir / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        register = getattr(module, "register", None)
        if not callable(register):
            loaded.error = "no register() function"
            return loaded
        register(ctx)
    except Exception as exc:
        loaded.error = f"{type(exc).__name__}: {exc}"
        return loaded
    loaded.module = module
    loaded.tools_registered = [r["name"] for r in ctx.registrations]
    return loaded
