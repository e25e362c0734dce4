"""Stand-ins for the Hermes surfaces beyond tools that the shim uses (release 0.21 and its main branch):

* ``agent.context_references``: ``ContextCompletionItem(text, display="", meta="")``; the abstract base
  ``ContextReferenceProvider`` with class attributes ``prefix`` and ``description`` and the abstract coroutines
  ``autocomplete(query, *, limit=10)`` and ``expand(target)``; ``register_context_reference_provider(provider)``,
  which refuses a provider that is not an instance of the base (TypeError), an empty prefix, a built-in prefix
  (diff, staged, file, folder, git, url) or a prefix already taken (ValueError).
* The plugin context's ``register_hook(hook_name, callback)`` and the manager's ``invoke_hook(name, **kwargs)``
  for ``pre_llm_call``: keyword arguments ``session_id, user_message, conversation_history, is_first_turn, model,
  platform, sender_id`` (the user message a string, or a list of content parts); a callback answers a dict with
  ``"context"``, a string or None; the callback runs on its own thread in a copy of the firing thread's context
  (``contextvars.copy_context().run``) under a wall-clock bound (30 s by default), and a callback that raises or
  overruns is skipped, never failing the turn.
* ``register_system_prompt_section(id, content, *, position="after_memory", max_chars=4000)``: the id 1-128
  characters of lower-case letters, digits, ".", "_" or "-"; content a string or a callable given a read-only
  session-info mapping; max_chars from 1 to 4000; a second section with the same id is refused (ValueError).
  Rendering calls the callable once per new session and cuts the text to max_chars.
"""

from __future__ import annotations

import abc
import contextvars
import re
import threading
import types
from types import MappingProxyType

BUILTIN_PREFIXES = frozenset({"diff", "staged", "file", "folder", "git", "url"})
HOOK_TIMEOUT_SECONDS = 30.0
MAX_SECTION_CHARS = 4000
SECTION_POSITIONS = frozenset({"after_memory"})
_SECTION_ID = re.compile(r"^[a-z0-9._-]{1,128}$")


def context_references_module() -> types.ModuleType:
    """A fresh ``agent.context_references`` module with its own provider registry."""
    module = types.ModuleType("agent.context_references")
    providers: dict = {}

    class ContextCompletionItem:
        __slots__ = ("text", "display", "meta")

        def __init__(self, text: str, display: str = "", meta: str = "") -> None:
            self.text = text
            self.display = display or text
            self.meta = meta

    class ContextReferenceProvider(abc.ABC):
        prefix: str = ""
        description: str = ""

        @abc.abstractmethod
        async def autocomplete(self, query: str, *, limit: int = 10) -> list:
            """Autocomplete items for what the user typed after the prefix."""

        @abc.abstractmethod
        async def expand(self, target: str):
            """The prompt text for the target, or None to skip it."""

    def register_context_reference_provider(provider) -> None:
        if not isinstance(provider, ContextReferenceProvider):
            raise TypeError("provider must be a ContextReferenceProvider instance")
        prefix = provider.prefix.lower().strip()
        if not prefix:
            raise ValueError("prefix must be a non-empty string")
        if prefix in BUILTIN_PREFIXES:
            raise ValueError(f"prefix '{prefix}' is reserved for built-in references")
        if prefix in providers:
            raise ValueError(f"prefix '{prefix}' is already registered")
        providers[prefix] = provider

    module.ContextCompletionItem = ContextCompletionItem
    module.ContextReferenceProvider = ContextReferenceProvider
    module.register_context_reference_provider = register_context_reference_provider
    module.get_context_reference_providers = lambda: dict(providers)
    return module


class SurfaceContextMixin:
    """The registration methods of Hermes's plugin context for hooks, context references and prompt sections."""

    def _surfaces_init(self) -> None:
        self.hooks: dict[str, list] = {}
        self.sections: dict[str, dict] = {}
        self.hook_timeout = HOOK_TIMEOUT_SECONDS

    def register_hook(self, hook_name: str, callback) -> None:
        self.hooks.setdefault(hook_name, []).append(callback)

    def invoke_hook(self, hook_name: str, **kwargs) -> list:
        """Every callback of ``hook_name`` in a thread under the wall-clock bound; what each answered (None,
        exceptions and overruns left out)."""
        results = []
        for callback in self.hooks.get(hook_name, []):
            box: list = []

            # Hermes runs each bounded callback in a copy of the firing thread's context.
            context = contextvars.copy_context()

            def run(callback=callback, box=box, context=context):
                try:
                    box.append(context.run(callback, **kwargs))
                except Exception:
                    pass

            worker = threading.Thread(target=run, daemon=True)
            worker.start()
            worker.join(self.hook_timeout)
            if worker.is_alive() or not box or box[0] is None:
                continue
            results.append(box[0])
        return results

    def pre_llm_call(self, user_message, *, history=None, session_id="s-1", first=True) -> list:
        """Fire ``pre_llm_call`` with the keyword arguments Hermes's conversation loop passes."""
        return self.invoke_hook(
            "pre_llm_call",
            session_id=session_id,
            user_message=user_message,
            conversation_history=list(history or []),
            is_first_turn=first,
            model="stub-model",
            platform="cli",
            sender_id="",
        )

    def register_context_reference(self, provider) -> None:
        import sys

        module = sys.modules["agent.context_references"]
        if not isinstance(provider, module.ContextReferenceProvider):
            return  # Hermes warns and ignores a provider of the wrong type
        try:
            module.register_context_reference_provider(provider)
        except ValueError:
            return

    def register_system_prompt_section(self, id: str, content, *, position: str = "after_memory",
                                       max_chars: int = MAX_SECTION_CHARS):
        if not _SECTION_ID.match(id or ""):
            raise ValueError("system prompt section id must be 1-128 lowercase characters")
        if not isinstance(content, str) and not callable(content):
            raise TypeError("system prompt section content must be a string or callable")
        if position not in SECTION_POSITIONS:
            raise ValueError("system prompt section position must be one of: after_memory")
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or not 0 < max_chars <= MAX_SECTION_CHARS:
            raise ValueError(f"system prompt section max_chars must be between 1 and {MAX_SECTION_CHARS}")
        if id in self.sections:
            raise ValueError(f"system prompt section {id!r} is already registered")
        self.sections[id] = {"content": content, "position": position, "max_chars": max_chars}

    def render_sections(self, session_info: dict | None = None) -> dict[str, str]:
        """What a new session's prompt gets from each section (a callable is called once, text cut to max_chars)."""
        out = {}
        for id, section in self.sections.items():
            content = section["content"]
            text = content(MappingProxyType(dict(session_info or {}))) if callable(content) else content
            if isinstance(text, str) and text.strip():
                out[id] = text[: section["max_chars"]]
        return out
