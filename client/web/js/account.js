// Accounts (#/account): a guest registers (keeping its statistics) or logs in; an account
// changes its password or logs out, here or everywhere. Each form shows the server's answer,
// errors included, in its own status line. Password fields are read once and cleared: the
// page keeps the token the server answers with, never a password.

import { fill, h, statusLine } from "./dom.js";

/** Why the server refused, in words; a few refusals also say what to do about them. */
export function refusal(error) {
  const advice = {
    "insecure-transport": "Open the page over https:// (wss://) to send a password.",
    "not-allowed": "Finish or leave your race first (open it from the lobby or its link).",
    disconnected: "Try again once the page has reconnected.",
  }[error.code];
  return advice ? `${error.message}. ${advice}` : error.message;
}

function field(id, label, type, autocomplete) {
  const input = h("input", { type, id, autocomplete, required: true, maxlength: type === "password" ? "128" : "24" });
  return [input, h("label", { for: id }, label, input)];
}

export class AccountScreen {
  constructor(conn) {
    this.conn = conn;
  }

  mount(main) {
    this.root = h("section", { id: "account" });
    fill(main, this.root);
    this.notice = "";
    this.off = this.conn.on((kind, message) => {
      if (kind === "logged-out") this.notice = `Logged out (${message.reason || "the session ended"}).`;
      if (kind === "connected" || kind === "account") this.draw();
    });
    this.draw();
  }

  unmount() {
    this.off();
  }

  /** A form of `fields` that runs `action(...values)`; its status line shows the outcome. */
  form(id, title, fields, submitText, action, done) {
    const status = statusLine();
    const inputs = fields.map(([input]) => input);
    const submit = async (event) => {
      event.preventDefault();
      const values = inputs.map((input) => input.value);
      const button = event.target.querySelector("button");
      button.disabled = true;
      status.show("…");
      try {
        await action(...values);
        for (const input of inputs) if (input.type === "password") input.value = "";
        status.show(done);
      } catch (error) {
        for (const input of inputs) if (input.type === "password") input.value = "";
        status.show(refusal(error), true);
      } finally {
        button.disabled = false;
      }
    };
    return h(
      "form",
      { className: "panel account-form", id, onsubmit: submit },
      h("h2", {}, title),
      fields.map(([, label]) => label),
      h("button", { type: "submit", className: "primary" }, submitText),
      status,
    );
  }

  /** Draw what the connection is now (not again when nothing changed, so statuses stay). */
  draw() {
    const conn = this.conn;
    const shown = `${conn.state} ${conn.account} ${conn.player} ${conn.name}`;
    if (shown === this.shown) return;
    this.shown = shown;
    if (conn.state !== "connected") {
      fill(this.root, h("h1", {}, "Account"), h("p", { className: "muted" }, "Connecting…"));
      return;
    }
    if (!conn.account) {
      fill(
        this.root,
        h("h1", {}, "Account"),
        this.notice ? h("p", { className: "status", id: "account-notice" }, this.notice) : null,
        h("p", { id: "account-state" }, `You are playing as a guest, ${conn.name}. `, "Only accounts are on the leaderboards and have a ranked daily attempt, on every device."),
        h("div", { className: "grid-2" }, this.registerForm(), this.loginForm()),
      );
      return;
    }
    const status = statusLine();
    const logout = (everywhere) => async () => {
      try {
        await conn.logout(everywhere);
      } catch (error) {
        status.show(refusal(error), true);
      }
    };
    fill(
      this.root,
      h("h1", {}, "Account"),
      h("p", { id: "account-state" }, `You are logged in as ${conn.name}.`),
      h(
        "div",
        { className: "panel toolbar" },
        h("button", { id: "logout", onclick: logout(false) }, "Log out"),
        h("button", { id: "logout-everywhere", onclick: logout(true) }, "Log out everywhere"),
        h("span", { className: "muted" }, "(every device and tab of this account)"),
        status,
      ),
      this.passwordForm(),
    );
  }

  registerForm() {
    const name = field("register-name", "Name", "text", "username");
    name[0].value = this.conn.name || "";
    const password = field("register-password", "Password (at least 8 characters)", "password", "new-password");
    const confirm = field("register-confirm", "Password again", "password", "new-password");
    return this.form(
      "register-form",
      "Register",
      [name, password, confirm],
      "Register",
      async (chosen, first, second) => {
        if (first !== second) throw new Error("The two passwords differ.");
        await this.conn.register(chosen.trim(), first);
      },
      "Registered.",
    );
  }

  loginForm() {
    const name = field("login-name", "Name", "text", "username");
    const password = field("login-password", "Password", "password", "current-password");
    return this.form(
      "login-form",
      "Log in",
      [name, password],
      "Log in",
      (chosen, secret) => this.conn.login(chosen.trim(), secret),
      "Logged in.",
    );
  }

  passwordForm() {
    const current = field("current-password", "Current password", "password", "current-password");
    const next = field("new-password", "New password", "password", "new-password");
    const confirm = field("new-confirm", "New password again", "password", "new-password");
    return this.form(
      "password-form",
      "Change the password",
      [current, next, confirm],
      "Change",
      async (old, first, second) => {
        if (first !== second) throw new Error("The two new passwords differ.");
        await this.conn.changePassword(old, first);
      },
      "Password changed: your other devices are logged out.",
    );
  }
}
