"""The account screens, opened from the home menu: register (the guest becomes an account),
log in, change the password, log out (on this device or everywhere).

They send the requests and show the server's answer; the rules (how long a password is,
which names are free, how many attempts are allowed) are the server's, and its refusals
are shown in the form as it words them. The new resume token of an ``account`` reply is
kept by the client library and saved by the app (``tui/app.py``); a password lives only in
its input box and in the request, and is never saved or logged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from client.lib.connection import RaceClient, ServerError
from client.tui.base import ClientScreen, explain
from protocol.messages import (
    AccountInfo,
    ChangePassword,
    ClientMessage,
    Login,
    Logout,
    Register,
    ServerMessage,
)

#: Seconds to wait for an answer: the server hashes passwords slowly on purpose, and holds a
#: failed login for a second.
ACCOUNT_TIMEOUT = 30.0
#: The longest name and password the protocol carries.
NAME_LENGTH, PASSWORD_LENGTH = 24, 128


@dataclass(frozen=True)
class Field:
    """An input box of a form: its id, its label, and whether it holds a password."""

    id: str
    label: str
    secret: bool = True
    placeholder: str = ""


def why(error: BaseException) -> str:
    """A refused account request, in words (the server's own, plus what to do about TLS)."""
    text = explain(error)
    text = text[:1].upper() + text[1:]
    if isinstance(error, ServerError) and error.code == "insecure-transport":
        return f"{text}. Use a wss:// address: --server wss://host/…"
    return text


class AccountForm(ClientScreen):
    """A form of input boxes and a button. Enter moves to the next box, and on the last one
    sends the form (as the button does); Escape goes back. Subclasses name the fields, build
    the request (:meth:`build`, or a message saying what to fix first) and say what
    happened (:meth:`success`). While a request is out the button is disabled."""

    HEADING: ClassVar[str]
    INTRO: ClassVar[str]
    FIELDS: ClassVar[tuple[Field, ...]]
    SEND: ClassVar[str]

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back", priority=True)]

    DEFAULT_CSS = """
    AccountForm > Vertical { padding: 0 2; height: auto; }
    AccountForm Horizontal { height: auto; margin: 0 0 1 0; }
    AccountForm Horizontal > Label { width: 24; padding: 0 1 0 0; }
    AccountForm Input { width: 36; }
    AccountForm #account-intro { margin: 0 0 1 0; }
    AccountForm #account-message { max-height: 3; }
    """

    def body(self) -> ComposeResult:
        yield Label(self.HEADING, classes="title")
        yield Static(self.INTRO, id="account-intro", classes="hint")
        with Vertical():
            for field in self.FIELDS:
                with Horizontal():
                    yield Label(field.label)
                    yield Input(
                        value=self.initial(field),
                        password=field.secret,
                        max_length=PASSWORD_LENGTH if field.secret else NAME_LENGTH,
                        placeholder=field.placeholder,
                        compact=True,
                        id=field.id,
                    )
            yield Button(self.SEND, id="send", compact=True, variant="primary")
        yield Static(id="account-message", classes="message")
        yield Static("Tab or Enter: next box · Enter on the last: send · Esc: back", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        empty = [field.id for field in self.FIELDS if not self.value(field.id)]
        self.query_one(f"#{(empty or [self.FIELDS[0].id])[0]}", Input).focus()

    def initial(self, field: Field) -> str:
        """What box ``field`` holds at first (empty, unless a subclass knows better)."""
        return ""

    def value(self, field_id: str) -> str:
        return self.query_one(f"#{field_id}", Input).value

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#account-message", Static)
        message.update(text)
        message.set_class(error, "error")

    def show_error(self, text: str) -> None:
        self.say(text, error=True)

    def build(self) -> Callable[[int], ClientMessage] | str:
        raise NotImplementedError

    def success(self, reply: ServerMessage) -> None:
        raise NotImplementedError

    async def prepare(self, client: RaceClient) -> None:
        """What to do before sending the request (nothing, unless a subclass says)."""

    @on(Input.Submitted)
    def next_or_send(self, event: Input.Submitted) -> None:
        ids = [field.id for field in self.FIELDS]
        here = event.input.id or ""
        if here in ids and ids.index(here) < len(ids) - 1:
            self.query_one(f"#{ids[ids.index(here) + 1]}", Input).focus()
        else:
            self.send()

    @on(Button.Pressed, "#send")
    def send(self) -> None:
        button = self.query_one("#send", Button)
        if button.disabled:
            return
        built = self.build()
        if isinstance(built, str):
            self.show_error(built)
            return
        client = self.client
        if client is None:
            self.show_error("Not connected to the server yet: wait for the connection, then try again.")
            return
        button.disabled = True
        self.say("Waiting for the server…")

        async def attempt() -> None:
            try:
                await self.prepare(client)
                reply = await client.request(built, timeout=ACCOUNT_TIMEOUT)
            except (ServerError, ConnectionError, TimeoutError) as error:
                self.show_error(why(error))
                # Type the passwords again: the next attempt should not reuse a wrong one.
                secrets = [field.id for field in self.FIELDS if field.secret]
                for field_id in secrets:
                    self.query_one(f"#{field_id}", Input).value = ""
                if secrets:
                    self.query_one(f"#{secrets[0]}", Input).focus()
                return
            finally:
                button.disabled = False
            self.success(reply)

        self.run_worker(attempt(), exit_on_error=False)


class RegisterScreen(AccountForm):
    """Register: this guest becomes the account ``name``, keeping its statistics."""

    HEADING = "Register an account"
    INTRO = (
        "This player becomes an account: it keeps its statistics and rating, and you can "
        "log in to it from any device. Choose a name nobody has and a password."
    )
    FIELDS = (
        Field("account-name", "Name", secret=False, placeholder="the account's name"),
        Field("password", "Password", placeholder="a password"),
        Field("confirm", "Password again", placeholder="the same password"),
    )
    SEND = "Register"

    def initial(self, field: Field) -> str:
        client = self.client
        return client.name if field.id == "account-name" and client is not None else ""

    def build(self) -> Callable[[int], ClientMessage] | str:
        name, password = self.value("account-name").strip(), self.value("password")
        if not name:
            return "Type a name first."
        if not password:
            return "Type a password."
        if password != self.value("confirm"):
            return "The two passwords differ: type them again."
        return lambda i: Register(id=i, name=name, password=password)

    def success(self, reply: ServerMessage) -> None:
        if isinstance(reply, AccountInfo):
            self.app.notify(f"Registered: you are the account {reply.name}, logged in on this device.")
        self.go_home()


class LoginScreen(AccountForm):
    """Log in: this connection becomes the account (the guest it was is left behind)."""

    HEADING = "Log in"
    INTRO = (
        "Log in to your account on this device. The guest you play as now is left behind. "
        "Finish or leave a race you are in first."
    )
    FIELDS = (
        Field("account-name", "Account name", secret=False, placeholder="your account's name"),
        Field("password", "Password", placeholder="its password"),
    )
    SEND = "Log in"

    async def prepare(self, client: RaceClient) -> None:
        """Stop following the rooms that would only be in the way: the server logs in only a
        connection that follows no room. Rooms watched, and races over (the results stay
        followed after going home), are left; a race still on is not (leaving it would
        resign it), and the server's refusal then says to leave it first."""
        for code, role in list(client.roles.items()):
            mirror = client.rooms.get(code)
            if role == "spectator" or mirror is None or mirror.view().state == "finished":
                await client.leave(code)

    def build(self) -> Callable[[int], ClientMessage] | str:
        name, password = self.value("account-name").strip(), self.value("password")
        if not name or not password:
            return "Type the account's name and its password."
        return lambda i: Login(id=i, name=name, password=password)

    def success(self, reply: ServerMessage) -> None:
        if isinstance(reply, AccountInfo):
            self.app.notify(f"Logged in as {reply.name}.")
        self.go_home()


class PasswordScreen(AccountForm):
    """Change the password: the account's other devices are logged out."""

    HEADING = "Change your password"
    INTRO = "Your other devices and browsers are logged out; this one stays logged in."
    FIELDS = (
        Field("password", "Current password", placeholder="the password you have"),
        Field("new-password", "New password", placeholder="a new password"),
        Field("confirm", "New password again", placeholder="the same new password"),
    )
    SEND = "Change the password"

    def build(self) -> Callable[[int], ClientMessage] | str:
        password, new = self.value("password"), self.value("new-password")
        if not password or not new:
            return "Type your current password and a new one."
        if new != self.value("confirm"):
            return "The two new passwords differ: type them again."
        return lambda i: ChangePassword(id=i, password=password, new_password=new)

    def success(self, reply: ServerMessage) -> None:
        self.app.notify("Password changed. Your other devices are logged out.")
        self.go_home()


class LogoutScreen(ClientScreen):
    """Log out on this device (``t``) or on every device (``e``). The server then closes
    the connection, and the app carries on as a new guest."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "log_out(False)", "This device"),
        Binding("e", "log_out(True)", "Everywhere"),
        Binding("escape", "app.pop_screen", "Back", priority=True),
    ]

    DEFAULT_CSS = """
    LogoutScreen OptionList { height: auto; margin: 1 2; }
    """

    def body(self) -> ComposeResult:
        client = self.client
        name = client.name if client is not None else "your account"
        yield Label(f"Log out of {name}", classes="title")
        yield Static("Afterwards this client plays as a new guest; log in again from the home menu.", classes="hint")
        yield OptionList(
            Option("Log out on this device (t)", id="here"),
            Option("Log out everywhere: every device and browser (e)", id="everywhere"),
            id="logout-choice",
        )
        yield Static(id="logout-message", classes="message error")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#logout-choice", OptionList).focus()

    def show_error(self, text: str) -> None:
        self.query_one("#logout-message", Static).update(text)

    @on(OptionList.OptionSelected, "#logout-choice")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.action_log_out(event.option.id == "everywhere")

    def action_log_out(self, everywhere: bool) -> None:
        # The ack comes first, then the server closes the connection (4001): the app sees the
        # close and connects again as a guest.
        self.request(lambda i: Logout(id=i, everywhere=everywhere), lambda reply: self.go_home(), "Not logged out")
