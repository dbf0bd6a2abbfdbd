"""The chat in a terminal: a prompt with history (prompt_toolkit), answers as Markdown (rich).

The seed's states: while a turn runs the prompt is gone (Busy), progress lines show; once the
answer is out the prompt is back while learning runs in the background, and a message sent then
is queued (the toolbar says so; a later one replaces it) and goes out by itself when learning
ends. Approvals ask at the prompt: ``y`` runs the call, anything else declines, and words other
than ``n`` go back to the model as the reason. A paste of several lines is a document: it goes
to the model as data, never as the user's words.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from ..errors import MemvaultError
from ..security.text import visible
from .agent import Agent, Approval, Decision
from .commands import Commands, command_named, split

FIRE = "\x00queued"
"""What the prompt returns when a queued message is due (no one can type a NUL)."""
DOCUMENT_LINES = 3
DOCUMENT_CHARS = 500
"""A paste of this many lines or characters is a document."""
QUIT = ("/quit", "/exit")


def shown(text: str) -> str:
    """Text from elsewhere inside rich markup: its controls written out, its brackets not
    read as markup."""
    return escape(visible(text))


class Terminal:
    """The interactive chat of ``agent`` on ``console``; ``ask``: approvals are asked at the
    prompt (else the agent's approver stays, ``--yes``'s)."""

    def __init__(self, agent: Agent, console: Console, *, ask: bool = True) -> None:
        self.agent, self.console, self.ask = agent, console, ask
        self.commands = Commands(agent)
        self.queued: tuple[str, list[str]] | None = None
        """The message (and its pasted documents) that goes out when learning ends."""
        self.documents: list[str] = []
        self._draft = ""
        self.prompt: PromptSession[str] = PromptSession(
            history=self._history(),
            key_bindings=self._keys(),
            bottom_toolbar=self._toolbar,
            refresh_interval=0.25,
        )

    def run(self) -> None:
        """Chat until ``/quit`` or end of input (Ctrl-D)."""
        asyncio.run(self._run())

    async def _run(self) -> None:
        if self.ask:
            self.agent.approve = self._approver(asyncio.get_running_loop())
        where = (
            f"session {self.agent.session.id}"
            if self.agent.started
            else "a new session starts with your first message"
        )
        self.console.print(f"[dim]{where} · /help lists the commands[/]")
        watcher = asyncio.create_task(self._watch())
        try:
            while (text := await self._read()) is not None:
                if text.strip() in QUIT:
                    break
                await self._handle(text)
        finally:
            watcher.cancel()
            self._drop_queued("not sent: the chat ended")

    async def _read(self) -> str | None:
        """The next line (a queued message when it is due); None at end of input."""
        while True:
            try:
                text = await self.prompt.prompt_async(self._label(), default=self._draft)
            except EOFError:
                return None
            except KeyboardInterrupt:
                self.documents.clear()
                continue
            if text == FIRE and self.queued:
                (text, self.documents), self.queued = self.queued, None
                self.console.print(f"[dim]sending the queued message:[/] {shown(text)}")
            else:
                self._draft = ""
            if text.strip() and text != FIRE:
                return text

    async def _handle(self, text: str) -> None:
        try:
            if text.startswith("/"):
                await self._command(text)
            elif self.agent.extracting:
                self.queued, self.documents = (text, self.documents), []
                self.console.print(
                    "[yellow]queued[/]: it goes out when learning from the last turn ends"
                )
            else:
                await self._send(text)
        except MemvaultError as exc:
            self.console.print(f"[red]error:[/] {shown(str(exc))}")
        except Exception as exc:  # a defect: say it and go on; the conversation is stored
            self.console.print(f"[red]internal error:[/] {shown(f'{type(exc).__name__}: {exc}')}")

    async def _command(self, text: str) -> None:
        if command_named(split(text)[0]).settles:
            self._drop_queued("not sent: the session changes")
            if self.agent.extracting:
                self.console.print("[dim]waiting for learning from the last turn to end…[/]")
        output = await asyncio.to_thread(self.commands.run, text)
        self.console.print(visible(output), markup=False, highlight=False)

    async def _send(self, text: str) -> None:
        documents, self.documents = self.documents, []
        answer = await asyncio.to_thread(self.agent.send, text, documents)
        self.console.print(Markdown(visible(answer.text)))

    async def _watch(self) -> None:
        """Send the queued message once learning ends."""
        while True:
            await asyncio.sleep(0.2)
            app = self.prompt.app
            try:
                due = self.queued and app.is_running and not self.agent.extracting
            except MemvaultError:  # the store cannot say: ask again soon
                continue
            if due:
                self._draft = self.prompt.default_buffer.text
                app.exit(result=FIRE)

    def _drop_queued(self, why: str) -> None:
        if self.queued:
            self.console.print(f"[yellow]{why}:[/] {shown(self.queued[0])}")
            self.queued = None

    def _approver(self, loop: asyncio.AbstractEventLoop) -> Callable[[Approval], Decision]:
        def approve(approval: Approval) -> Decision:
            return asyncio.run_coroutine_threadsafe(self._ask(approval), loop).result()

        return approve

    async def _ask(self, approval: Approval) -> Decision:
        self.console.print(f"[bold]{shown(approval.tool)}[/] wants to run:")
        self.console.print(visible(approval.preview), markup=False, highlight=False)
        asked: PromptSession[str] = PromptSession()
        try:
            said = (await asked.prompt_async("Approve? [y/N, or say why not] ")).strip()
        except (EOFError, KeyboardInterrupt):
            said = ""
        if said.lower() in ("y", "yes"):
            return Decision(True)
        return Decision(False, "" if said.lower() in ("", "n", "no") else said)

    def _label(self) -> str:
        private = " [private]" if self.agent.private else ""
        return f"{self.agent.user}{private}> "

    def _toolbar(self) -> str:
        if self.queued:
            return f" queued: {visible(self.queued[0][:60])} (goes out when learning ends)"
        return " learning from the last turn…" if self.agent.extracting else ""

    def _history(self) -> InMemoryHistory:
        """The session's own messages (no history file: nothing outlives an erasure)."""
        if not self.agent.started:
            return InMemoryHistory()
        records = self.agent.memory.records(self.agent.session.id)
        return InMemoryHistory([r.content for r in records if r.role == "user"])

    def _keys(self) -> KeyBindings:
        keys = KeyBindings()

        @keys.add(Keys.BracketedPaste)
        def paste(event: KeyPressEvent) -> None:
            data = event.data.replace("\r\n", "\n").replace("\r", "\n")
            if data.count("\n") + 1 < DOCUMENT_LINES and len(data) < DOCUMENT_CHARS:
                event.current_buffer.insert_text(data)
                return
            self.documents.append(data)
            lines = data.count("\n") + 1
            event.current_buffer.insert_text(
                f"[pasted document {len(self.documents)}: {lines} lines]"
            )

        return keys
