"""The account screens of the terminal UI (register, log in, change the password, log out),
driven by Textual's test pilot against a real server on the session's real Redis."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import TypeVar

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from client.lib.connection import RaceClient
from client.lib.settings import FILE_NAME, Settings
from client.tui.account import LoginScreen, LogoutScreen, PasswordScreen, RegisterScreen
from client.tui.app import RaceApp
from client.tui.base import ClientScreen
from client.tui.home import HomeScreen
from protocol.errors import CloseCode
from protocol.messages import (
    AccountInfo,
    ChangePassword,
    CreateRoom,
    Joined,
    Login,
    Logout,
    Ready,
    Register,
    Resign,
    RoomOptions,
)
from tests.client.conftest import Running, Serve, eventually
from tests.client.tui.keyboard import focus, send_keys, type_text
from tests.client.tui.test_tui import choose, client_of, home, saved, showing, text_of

pytestmark = pytest.mark.asyncio

PASSWORD = "tui-secret-42"
NEW_PASSWORD = "tui-newer-secret-43"
#: Seconds the servers here hold a wrong password's refusal (``login_failure_delay``; 1 s by
#: default): the refusal is what these tests look at, not its pause.
FAILURE_DELAY = 0.05


def menu_ids(app: RaceApp) -> set[str]:
    return {option.id or "" for option in app.screen.query_one("#menu", OptionList).options}


async def as_account(app: RaceApp) -> None:
    """Wait for the home screen of a connection that is an account."""
    await home(app)
    await eventually(lambda: "(account)" in text_of(app, "#who"), what="an account on the home screen")


F = TypeVar("F", bound=ClientScreen)


async def open_from_home(app: RaceApp, pilot: Pilot[int], choice: str, kind: type[F]) -> F:
    """Choose ``choice`` on the home menu and wait for its screen, a ``kind``."""
    await home(app)
    await choose(app, pilot, choice)
    screen = await eventually(showing(app, kind), what=f"the screen of {choice!r}")
    assert isinstance(screen, kind)
    return screen


async def fill(pilot: Pilot[int], app: RaceApp, **boxes: str) -> None:
    """Type ``boxes`` (input id with ``_`` for ``-``: text) into the current form's boxes."""
    for box, text in boxes.items():
        field = app.screen.query_one(f"#{box.replace('_', '-')}", Input)
        field.value = ""
        await focus(app, field)
        await type_text(app, text)


async def register_on_screen(app: RaceApp, pilot: Pilot[int], password: str = PASSWORD) -> None:
    form = await open_from_home(app, pilot, "register", RegisterScreen)
    assert form.query_one("#account-name", Input).value == client_of(app).name  # the name offered
    # The focus starts in the first empty box; Enter moves on, and sends from the last box.
    assert app.focused is form.query_one("#password", Input)
    await type_text(app, password)
    send_keys(app, "enter")
    confirm = form.query_one("#confirm", Input)
    await eventually(lambda: app.focused is confirm, what="the focus moved on by Enter")
    await type_text(app, password)
    send_keys(app, "enter")
    await as_account(app)


async def test_register_on_the_screen_and_the_next_start_is_still_the_account(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            assert "Playing as Ann (guest)" in text_of(app, "#who")
            guest = client_of(app).player
            await register_on_screen(app, pilot)
            assert "Playing as Ann (account)" in text_of(app, "#who")
            assert client_of(app).player == guest  # the guest became the account
            assert {"password", "logout"} <= menu_ids(app)
            assert not {"register", "login", "name"} & menu_ids(app)
        saved_text = (tmp_path / "config" / FILE_NAME).read_text(encoding="utf-8")
        assert PASSWORD not in saved_text  # the token is kept, never the password
        token = Settings.load(tmp_path / "config").tokens[srv.url]
        assert token.startswith(f"{guest}.")

        again = RaceApp(srv.url, config_dir=tmp_path / "config")
        async with again.run_test(size=(80, 24)):
            await as_account(again)
            assert client_of(again).player == guest
            assert "Playing as Ann (account)" in text_of(again, "#who")


async def test_register_refusals_are_shown_in_the_form(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")
        await bob.request(lambda i: Register(id=i, name="Bob", password=PASSWORD))
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            form = await open_from_home(app, pilot, "register", RegisterScreen)
            await fill(pilot, app, password=PASSWORD, confirm=PASSWORD + "x")
            send_keys(app, "enter")
            await eventually(lambda: "The two passwords differ" in text_of(app, "#account-message"), what="differ")
            await fill(pilot, app, account_name="BOB", password=PASSWORD, confirm=PASSWORD)
            send_keys(app, "enter")
            await eventually(lambda: "taken" in text_of(app, "#account-message"), what="the name taken")
            assert form.query_one("#password", Input).value == ""  # typed again for the next try
            await fill(pilot, app, account_name="Ann", password="short", confirm="short")
            send_keys(app, "enter")
            await eventually(lambda: "at least 8 characters" in text_of(app, "#account-message"), what="weak")
            assert app.screen is form
            assert not client_of(app).account


async def test_log_out_then_log_in_again_and_a_wrong_password_is_shown(serve: Serve, tmp_path: Path) -> None:
    async with serve(login_failure_delay=FAILURE_DELAY) as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await register_on_screen(app, pilot)
            account = client_of(app).player
            await open_from_home(app, pilot, "logout", LogoutScreen)
            send_keys(app, "t")  # this device
            await home(app)
            await eventually(lambda: "Playing as Ann (guest)" in text_of(app, "#who"), what="a guest again")
            assert client_of(app).player != account
            token = Settings.load(tmp_path / "config").tokens[srv.url]
            assert not token.startswith(f"{account}.")  # the account's token is forgotten

            form = await open_from_home(app, pilot, "login", LoginScreen)
            await fill(pilot, app, account_name="ann", password="not-the-password")
            send_keys(app, "enter")
            await eventually(lambda: "Wrong name or password" in text_of(app, "#account-message"), what="the refusal")
            assert app.screen is form
            assert app.focused is form.query_one("#password", Input)
            await type_text(app, PASSWORD)
            send_keys(app, "enter")
            await as_account(app)
            assert client_of(app).player == account
            assert "Playing as Ann (account)" in text_of(app, "#who")
        assert Settings.load(tmp_path / "config").tokens[srv.url].startswith(f"{account}.")


async def test_too_many_wrong_passwords_say_when_to_try_again(serve: Serve, tmp_path: Path) -> None:
    async with serve(login_attempts=1, login_failure_delay=FAILURE_DELAY) as srv:
        ann = await srv.connect("Ann")
        await ann.request(lambda i: Register(id=i, name="Ann", password=PASSWORD))
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Sam"))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_from_home(app, pilot, "login", LoginScreen)
            await fill(pilot, app, account_name="Ann", password="guess-one")
            send_keys(app, "enter")
            await eventually(lambda: "Wrong name or password" in text_of(app, "#account-message"))
            await fill(pilot, app, password=PASSWORD)
            send_keys(app, "enter")
            await eventually(lambda: "Too many failed logins" in text_of(app, "#account-message"))
            assert "try again in" in text_of(app, "#account-message")
            assert not client_of(app).account


async def other_device(srv: Running, password: str = PASSWORD) -> RaceClient:
    """Ann's account logged in on a second connection (another device)."""
    device = await srv.connect("Ann")
    reply = await device.request(lambda i: Login(id=i, name="Ann", password=password), timeout=30)
    assert isinstance(reply, AccountInfo)
    return device


async def test_change_the_password_and_the_other_devices_are_logged_out(serve: Serve, tmp_path: Path) -> None:
    async with serve(login_failure_delay=FAILURE_DELAY) as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await register_on_screen(app, pilot)
            account = client_of(app).player
            phone = await other_device(srv)
            form = await open_from_home(app, pilot, "password", PasswordScreen)
            await fill(pilot, app, password="not-the-password", new_password=NEW_PASSWORD, confirm=NEW_PASSWORD)
            send_keys(app, "enter")
            await eventually(lambda: "Wrong name or password" in text_of(app, "#account-message"))
            assert form.query_one("#new-password", Input).value == ""
            await fill(pilot, app, password=PASSWORD, new_password=NEW_PASSWORD, confirm=NEW_PASSWORD)
            send_keys(app, "enter")
            await as_account(app)
            await eventually(lambda: phone.ended is not None, what="the other device logged out")
            assert phone.ended is not None
            assert phone.ended.code == CloseCode.LOGGED_OUT
            assert not phone.connected.is_set()  # and it does not come back by itself
            # This device's new token is saved: a restart is still the account.
            token = client_of(app).resume
            assert Settings.load(tmp_path / "config").tokens[srv.url] == token
        again = RaceApp(srv.url, config_dir=tmp_path / "config")
        async with again.run_test(size=(80, 24)):
            await as_account(again)
        laptop = await other_device(srv, NEW_PASSWORD)  # the new password opens the account
        await laptop.request(lambda i: Logout(id=i, everywhere=True))
        # The saved token was revoked while this client was closed: it starts as a new guest.
        third = RaceApp(srv.url, config_dir=tmp_path / "config")
        async with third.run_test(size=(80, 24)):
            await home(third)
            await eventually(lambda: "Playing as Ann (guest)" in text_of(third, "#who"), what="a guest")
            assert client_of(third).player != account


async def test_a_session_ended_elsewhere_makes_this_device_a_guest(serve: Serve, tmp_path: Path) -> None:
    """Log out everywhere from this device ends the other's session, and the other way round."""
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await register_on_screen(app, pilot)
            laptop = await other_device(srv)
            await open_from_home(app, pilot, "logout", LogoutScreen)
            send_keys(app, "e")  # everywhere
            await eventually(lambda: laptop.ended is not None, what="the laptop logged out")
            await eventually(lambda: "Playing as Ann (guest)" in text_of(app, "#who"), what="a guest again")

            await open_from_home(app, pilot, "login", LoginScreen)
            await fill(pilot, app, account_name="Ann", password=PASSWORD)
            send_keys(app, "enter")
            await as_account(app)
            laptop = await other_device(srv)
            await laptop.request(lambda i: ChangePassword(id=i, password=PASSWORD, new_password=NEW_PASSWORD))
            # The server closed this device's connection: it goes on as a new guest, and says so.
            await eventually(lambda: "(guest)" in text_of(app, "#who"), what="logged out by the laptop")
            assert isinstance(app.screen, HomeScreen)
            assert {"register", "login"} <= menu_ids(app)


def address_off_loopback() -> str:
    """This machine's address on its way out (not loopback), or skip the test without one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # a UDP "connection" only picks the route: nothing is sent
        except OSError:
            pytest.skip("this machine has no address but loopback")
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        pytest.skip("this machine has no address but loopback")
    return address


async def test_a_password_over_plain_ws_from_another_host_is_refused_in_words(serve: Serve, tmp_path: Path) -> None:
    async with serve(host=address_off_loopback()) as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_from_home(app, pilot, "login", LoginScreen)
            await fill(pilot, app, account_name="Ann", password=PASSWORD)
            send_keys(app, "enter")
            await eventually(lambda: "wss://" in text_of(app, "#account-message"), what="the refusal")
            assert "--server wss://" in text_of(app, "#account-message")
            assert isinstance(app.screen, LoginScreen)


async def test_log_in_after_a_race_leaves_the_finished_room_first(serve: Serve, tmp_path: Path) -> None:
    """The server logs in only a connection that follows no room: the results of a race stay
    followed after going home, so logging in leaves them first."""
    async with serve() as srv:
        ann = await srv.connect("Ann")
        await ann.request(lambda i: Register(id=i, name="Ann", password=PASSWORD))
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Sam"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            client = client_of(app)
            joined = await client.request(
                lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(max_racers=1))
            )
            assert isinstance(joined, Joined)
            await client.request(lambda i: Ready(id=i, room=joined.room))
            await client.wait_room(joined.room, lambda m: m.view().state == "racing")
            await client.request(lambda i: Resign(id=i, room=joined.room))
            await client.wait_room(joined.room, lambda m: m.view().state == "finished")
            await open_from_home(app, pilot, "login", LoginScreen)
            await fill(pilot, app, account_name="Ann", password=PASSWORD)
            send_keys(app, "enter")
            await as_account(app)
            assert joined.room not in client_of(app).rooms


async def test_a_ban_is_shown_on_the_banner_and_the_client_stays_out(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)):
            await home(app)
            client = client_of(app)
            assert client.player is not None
            # What `python -m server admin ban` does: store the ban, and announce it to the servers.
            await srv.hub.accounts.ban(client.player, "testing")
            await srv.hub.accounts.announce({"action": "ban", "player": client.player, "reason": "testing"})
            await eventually(lambda: "banned: testing" in text_of(app, "#banner"), what="the ban on the banner")
            assert client.ended is not None
            assert client.ended.code == CloseCode.BANNED
            assert app.client is client  # no new connection: a banned player is kept out anyway
