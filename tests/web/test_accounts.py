"""Accounts in the web client, in a real browser against a real server: registering from the
page, the name in the header, a reload that stays logged in, logging out (here and
everywhere), logging in, changing the password, and the server's refusals shown in the form
(wrong password, name taken, too many attempts, a password over plain ws:// from afar).
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from tests.web.conftest import ThreadedServer, new_context, register_in_page, shot

WAIT = 15_000
PASSWORD = "a browser password"
NEW_PASSWORD = "another browser password"

pytestmark = pytest.mark.slow


def open_account(page: Any, base: str) -> None:
    page.goto(f"{base}/#/account")
    page.wait_for_selector("#account-state", timeout=WAIT)


def submit(page: Any, form: str, **values: str) -> str:
    """Fill ``form``'s fields (by id), submit it and return its status line once it answers."""
    for field, value in values.items():
        page.fill(f"#{field}", value)
    status = page.locator(f"#{form} .status")
    page.click(f"#{form} button[type=submit]")
    page.wait_for_function(
        "form => !['', '…'].includes(document.querySelector(`#${form} .status`)?.textContent ?? '…')"
        " || !document.querySelector(`#${form}`)",
        arg=form,
        timeout=WAIT,
    )
    return str(status.text_content()) if status.count() else ""


def header(page: Any) -> str:
    return str(page.text_content("#who-name"))


def wait_account(page: Any, name: str | None) -> None:
    """Until the header names the account ``name`` (None: a guest)."""
    expected = "false" if name is None else "true"
    page.wait_for_selector(f"#who-name[data-account={expected}]", timeout=WAIT)
    if name is not None:
        assert header(page) == name


def stored(page: Any) -> list[str]:
    return list(page.evaluate("() => Object.values(localStorage)"))


def change_password(page: Any, current: str, new: str) -> str:
    """Submit the password form (the new password twice); its status line."""
    fields = {"current-password": current, "new-password": new, "new-confirm": new}
    return submit(page, "password-form", **fields)


@pytest.fixture
def srv(web_server: Any) -> Iterator[ThreadedServer]:
    with web_server() as running:
        yield running


def test_register_reload_change_password_log_out_and_in(srv: ThreadedServer, page: Any) -> None:
    open_account(page, srv.base)
    assert header(page).startswith("Guest: ")
    guest_token = page.evaluate("() => localStorage.getItem('solitaire-race.resume')")
    # Two passwords that differ never reach the server.
    page.fill("#register-name", "Ada Lovelace")
    status = submit(page, "register-form", **{"register-password": PASSWORD, "register-confirm": "something else"})
    assert "differ" in status
    register_in_page(page, srv.base, "Ada Lovelace", PASSWORD)
    assert header(page) == "Ada Lovelace"
    assert page.locator("#register-form").count() == 0
    assert "logged in as Ada Lovelace" in str(page.text_content("#account-state"))
    token = page.evaluate("() => localStorage.getItem('solitaire-race.resume')")
    assert token != guest_token
    assert not any(PASSWORD in value for value in stored(page)), "a password was stored"
    shot(page, "account")
    # A reload resumes the account.
    page.reload()
    wait_account(page, "Ada Lovelace")
    assert page.locator("#rename").count() == 0  # an account's name is its own
    # The current password is checked: a wrong one is refused, in the form.
    assert "wrong name or password" in change_password(page, "not the password", NEW_PASSWORD)
    assert "at least 8 characters" in change_password(page, PASSWORD, "short")
    assert "Password changed" in change_password(page, PASSWORD, NEW_PASSWORD)
    assert page.evaluate("() => localStorage.getItem('solitaire-race.resume')") != token
    assert not any(secret in value for value in stored(page) for secret in (PASSWORD, NEW_PASSWORD))
    # Logging out makes the page a new guest, with no token of the account.
    page.click("#logout")
    wait_account(page, None)
    assert header(page).startswith("Guest: ")
    assert page.locator("#register-form").count() == 1
    assert "Logged out" in str(page.text_content("#account-notice"))
    # The name is the account's: a guest cannot register it (nor one that looks like it).
    page.fill("#register-name", "ADA LOVELACE")
    status = submit(page, "register-form", **{"register-password": PASSWORD, "register-confirm": PASSWORD})
    assert "taken" in status
    shot(page, "account-guest")
    # The old password no longer opens the account; the new one does.
    status = submit(page, "login-form", **{"login-name": "ada lovelace", "login-password": PASSWORD})
    assert "wrong name or password" in status
    assert header(page).startswith("Guest: ")
    submit(page, "login-form", **{"login-name": "ada lovelace", "login-password": NEW_PASSWORD})
    wait_account(page, "Ada Lovelace")
    page.reload()
    wait_account(page, "Ada Lovelace")


def test_log_out_everywhere_ends_the_other_devices_session(srv: ThreadedServer, page: Any, browser: Any) -> None:
    register_in_page(page, srv.base, "Grace Hopper", PASSWORD)
    other = new_context(browser).new_page()
    errors: list[str] = []
    other.on("pageerror", lambda error: errors.append(str(error)))
    try:
        open_account(other, srv.base)
        submit(other, "login-form", **{"login-name": "grace hopper", "login-password": PASSWORD})
        wait_account(other, "Grace Hopper")
        page.click("#logout-everywhere")
        wait_account(page, None)
        # The other device is told, and plays on as a guest.
        wait_account(other, None)
        other.wait_for_selector("#account-notice", timeout=WAIT)
        assert "logged out everywhere" in str(other.text_content("#account-notice"))
        other.reload()
        wait_account(other, None)
    finally:
        other.context.close()
    assert not errors, errors


def test_too_many_failed_logins_are_refused_in_the_form(web_server: Any, page: Any) -> None:
    with web_server(login_attempts=2) as srv:
        open_account(page, srv.base)
        for _ in range(2):
            status = submit(page, "login-form", **{"login-name": "Nobody", "login-password": PASSWORD})
            assert "wrong name or password" in status
        status = submit(page, "login-form", **{"login-name": "Nobody", "login-password": PASSWORD})
        assert "too many failed logins; try again in" in status
        assert header(page).startswith("Guest: ")


def outside_address() -> str | None:
    """An address of this machine that is not loopback (None if it has none)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # UDP: picks the outgoing interface, sends nothing
        address = str(probe.getsockname()[0])
        return None if address.startswith("127.") else address
    return None


def test_a_password_over_plain_ws_from_another_host_is_refused_in_the_form(web_server: Any, page: Any) -> None:
    address = outside_address()
    if address is None:
        pytest.skip("this machine has no address but loopback")
    with web_server(host="0.0.0.0") as srv:
        open_account(page, f"http://{address}:{srv.port}")
        page.fill("#register-name", "Far Away")
        status = submit(page, "register-form", **{"register-password": PASSWORD, "register-confirm": PASSWORD})
        assert "wss://" in status
        assert "https://" in status
        assert header(page).startswith("Guest: ")
