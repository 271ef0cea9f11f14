// A room on screen: racing in it (`/r/CODE`) or watching it (`#/watch/CODE`). Everything drawn
// comes from the room copy the connection keeps; the rules stay on the server.

import { BoardView } from "./board.js";
import { ServerError } from "./connection.js";
import { fill, formatMs, h, statusLine, variantName } from "./dom.js";
import { checkCommitment } from "./fairness.js";
import { PlayInput } from "./play.js";

function roomLink(code) {
  return `${location.origin}/r/${code}`;
}

function clockText(view, now) {
  const clock = view.clock;
  switch (view.state) {
    case "waiting":
      return "waiting";
    case "countdown":
      return `starts in ${Math.max(0, (clock.countdown_ends - now) / 1000).toFixed(1)} s`;
    case "racing": {
      const left = clock.ends ? ` · ${formatMs(clock.ends - now)} left` : "";
      return `${formatMs(now - clock.started)}${left}`;
    }
    case "finished":
      return clock.started && clock.finished ? `${formatMs(clock.finished - clock.started)} (over)` : "over";
    default:
      return view.state;
  }
}

function racerState(racer, view) {
  if (racer.finished_ms !== null) return `won in ${formatMs(racer.finished_ms)}`;
  if (racer.resigned) return racer.resigned === "resigned" ? "resigned" : racer.resigned;
  if (view.state === "waiting") return racer.ready ? "ready" : "not ready";
  return view.state === "racing" ? "racing" : "";
}

export class RoomScreen {
  /** `mode`: "race" (a seat, from /r/CODE) or "watch" (spectating). */
  constructor(conn, code, mode) {
    this.conn = conn;
    this.code = code.toUpperCase();
    this.mode = mode;
    this.boards = new Map();
    this.hint = null;
    this.fairnessShown = null;
    this.pending = false;
  }

  get copy() {
    return this.conn.rooms.get(this.code);
  }

  get me() {
    const copy = this.copy;
    return copy ? copy.view.racers.find((r) => r.player === this.conn.player) : undefined;
  }

  mount(main) {
    this.status = statusLine();
    this.title = h("h1", {}, `Room ${this.code}`);
    this.info = h("div", { className: "toolbar" });
    this.controls = h("div", { className: "toolbar" });
    this.moveForm = h(
      "form",
      { className: "toolbar", onsubmit: (e) => this.typedMove(e) },
      h("label", { for: "move-text" }, "Type a move"),
      h("input", { type: "text", id: "move-text", placeholder: "QS>5, 7H>h, deal", autocomplete: "off" }),
      h("button", { type: "submit" }, "Play"),
    );
    this.hintList = h("ol", { className: "hints" });
    this.panels = h("div", { className: "boards" });
    this.results = h("div", { id: "results" });
    this.joinPanel = h("div");
    this.root = h(
      "section",
      { id: "room", dataset: { code: this.code, mode: this.mode } },
      this.title,
      this.info,
      this.joinPanel,
      this.controls,
      this.status,
      this.mode === "race" ? this.moveForm : null,
      this.hintList,
      this.panels,
      this.results,
    );
    fill(main, this.root);
    this.off = this.conn.on((kind, message, room) => {
      if (room === this.code) this.changed(message);
      if (kind === "connected" && this.lost) this.status.show("connected again");
      if (kind === "disconnected") {
        this.lost = true;
        this.status.show("connection lost; reconnecting…", true);
      }
    });
    this.keyHandler = (e) => this.onKey(e);
    document.addEventListener("keydown", this.keyHandler);
    this.ticker = setInterval(() => this.tick(), 100);
    this.start().catch((error) => this.status.show(error.message, true));
  }

  unmount() {
    if (this.off) this.off();
    document.removeEventListener("keydown", this.keyHandler);
    clearInterval(this.ticker);
    if (this.mode === "watch" && this.conn.roles.get(this.code) === "spectator") this.conn.leave(this.code);
  }

  async start() {
    await this.conn.ready;
    if (this.mode === "watch") {
      await this.spectate();
      return;
    }
    // A seat restored by the hello (a reload) answers with a snapshot; otherwise, join.
    try {
      await this.conn.request({ type: "snapshot", room: this.code });
    } catch (error) {
      if (error instanceof ServerError && error.code === "not-in-room") {
        this.showJoin();
        return;
      }
      throw error;
    }
    if (!this.me) this.showJoin();
    this.render();
  }

  async spectate() {
    try {
      await this.conn.request({ type: "spectate", room: this.code });
      await this.conn.waitRoom(this.code);
      this.render();
    } catch (error) {
      this.status.show(`Cannot watch: ${error.message}`, true);
    }
  }

  showJoin() {
    const name = h("input", { type: "text", id: "join-name", maxlength: "24", value: this.conn.name || "" });
    const join = async (event) => {
      event.preventDefault();
      // An account plays under its own name (the server ignores another).
      const wanted = this.conn.account ? this.conn.name : name.value.trim();
      if (!wanted) {
        this.status.show("Choose a name first.", true);
        return;
      }
      try {
        if (wanted !== this.conn.name) await this.conn.rename(wanted);
        await this.conn.request({ type: "join", room: this.code });
        await this.conn.waitRoom(this.code, () => Boolean(this.me));
        fill(this.joinPanel, );
        this.status.show("You have a seat. Say ready when you are.");
        this.render();
      } catch (error) {
        const watchable = ["race-in-progress", "race-over"].includes(error.code);
        this.status.show(`Cannot join: ${error.message}${watchable ? " You can watch it." : ""}`, true);
      }
    };
    fill(this.joinPanel, 
      h(
        "form",
        { className: "panel toolbar", id: "join-form", onsubmit: join },
        this.conn.account ? h("span", {}, `You join as ${this.conn.name}.`) : [h("label", { for: "join-name" }, "Your name"), name],
        h("button", { type: "submit", className: "primary", id: "join" }, "Join the race"),
        h("a", { href: `/#/watch/${this.code}` }, "or watch it"),
      ),
    );
  }

  changed(message) {
    if (message.type === "snapshot" || message.type === "update") this.scheduleRender();
  }

  scheduleRender() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.render();
    });
  }

  /** May the player move on their board now? */
  canPlay() {
    const me = this.me;
    return Boolean(
      this.mode === "race" && me && this.copy.view.state === "racing" && me.finished_ms === null && !me.resigned,
    );
  }

  render() {
    const copy = this.copy;
    if (!copy) return;
    const view = copy.view;
    this.root.dataset.state = view.state;
    this.root.dataset.version = String(copy.version);
    this.title.textContent = `${variantName(view.variant)} · room ${view.code}`;
    this.renderInfo(view);
    this.renderControls(view);
    this.renderBoards(view);
    this.renderResults(view);
  }

  renderInfo(view) {
    const delay = view.options.spectator_delay ?? 0;
    const watching = this.mode === "watch";
    this.clock = h("span", { className: "clock", id: "clock" }, clockText(view, this.copy.serverNow()));
    fill(this.info, 
      h("span", { className: `pill ${view.state}`, id: "room-state" }, view.state),
      this.clock,
      h("span", { className: "muted" }, `${view.racers.length}/${view.options.max_racers ?? 2} racers`),
      h("span", { className: "muted", id: "spectators" }, `${view.spectators} watching`),
      h(
        "span",
        { className: "muted", id: "delay" },
        watching ? `you see this room ${delay} s late` : `spectators see it ${delay} s late`,
      ),
      view.daily ? h("span", { className: "pill" }, `daily ${view.daily.date}${view.daily.ranked ? " · ranked" : " · practice"}`) : null,
      view.options.deal ? h("span", { className: "muted" }, `deal ${view.options.deal}`) : null,
      view.certified === false
        ? h("span", { className: "pill", id: "uncertified" }, "random deal, not certified winnable")
        : null,
    );
  }

  renderControls(view) {
    if (this.mode !== "race" || !this.me) {
      fill(this.controls, 
        this.mode === "watch" ? h("a", { href: `/r/${view.code}` }, "Race in this room") : null,
      );
      return;
    }
    const me = this.me;
    const options = view.options;
    const playing = this.canPlay();
    const act = (label, fields, props = {}) =>
      h("button", { ...props, onclick: () => this.send(fields) }, label);
    fill(this.controls, 
      view.state === "waiting"
        ? act(me.ready ? "Not ready" : "Ready", { type: "ready", room: view.code, ready: !me.ready }, {
            id: "ready",
            className: me.ready ? "" : "primary",
          })
        : null,
      view.state === "waiting" && view.creator === this.conn.player
        ? act("Start now", { type: "start", room: view.code }, { id: "start" })
        : null,
      act("Undo", { type: "undo", room: view.code }, { id: "undo", disabled: !playing || options.undo === false }),
      h("button", { id: "hint", disabled: !playing || options.hints === false, onclick: () => this.askHint() }, "Hint"),
      act("Resign", { type: "resign", room: view.code }, { id: "resign", disabled: !playing }),
      view.state === "finished" && !view.daily ? act("Rematch", { type: "rematch", room: view.code }, { id: "rematch" }) : null,
      h("button", { onclick: () => this.copyLink() }, "Copy link"),
    );
    this.moveForm.hidden = !playing;
  }

  panelFor(racer) {
    let entry = this.boards.get(racer.seat);
    if (!entry) {
      const head = h("div", { className: "racer-head" });
      const bar = h("progress", { max: "52", value: "0" });
      const host = h("div", { className: "board-host" });
      const panel = h("div", { className: "racer-panel", dataset: { seat: String(racer.seat) } }, head, bar, host);
      entry = { panel, head, bar, host, view: new BoardView(host) };
      this.boards.set(racer.seat, entry);
    }
    return entry;
  }

  renderBoards(view) {
    const mine = this.me;
    const racers = [...view.racers].sort((a, b) => (a === mine ? -1 : b === mine ? 1 : a.seat - b.seat));
    const seats = new Set(racers.map((r) => r.seat));
    for (const seat of [...this.boards.keys()]) if (!seats.has(seat)) this.boards.delete(seat);
    const panels = [];
    for (const racer of racers) {
      const entry = this.panelFor(racer);
      const isMe = racer === mine;
      entry.panel.classList.toggle("me", isMe);
      entry.panel.dataset.moves = String(racer.progress.moves);
      entry.panel.dataset.home = String(racer.progress.home);
      fill(entry.head, 
        h("span", { className: "name" }, isMe ? `${racer.name} (you)` : racer.name),
        h("span", { className: "badge" }, racerState(racer, view)),
        h("span", {}, `${racer.progress.home}/52 home · ${racer.progress.ordered} in order · ${racer.progress.moves} moves`),
        racer.bot ? h("span", { className: "badge" }, "bot") : null,
        racer.connected ? null : h("span", { className: "badge" }, "disconnected"),
      );
      entry.bar.value = racer.progress.home;
      if (racer.board) {
        if (isMe && this.mode === "race") this.attachInput(entry);
        const marks = isMe && this.input ? { ...this.input.marks(), hint: this.hint } : {};
        entry.view.small = !isMe && this.mode === "race";
        entry.view.draw(view.piles, racer.board, marks);
      } else {
        fill(entry.host, 
          h(
            "p",
            { className: "muted" },
            view.state === "racing" ? "Board hidden while you race: progress only." : "The deal appears when the race starts.",
          ),
        );
      }
      panels.push(entry.panel);
    }
    fill(this.panels, ...panels);
  }

  attachInput(entry) {
    if (this.input && this.input.host === entry.host) return;
    this.input = new PlayInput(entry.host, {
      move: (text) => this.play(text),
      redraw: () => this.render(),
      piles: () => this.copy && this.copy.view.piles,
      board: () => this.me && this.me.board,
      enabled: () => this.canPlay(),
    });
  }

  async renderResults(view) {
    if (!view.results) {
      fill(this.results, );
      this.fairnessShown = null;
      return;
    }
    const key = `${view.code}:${view.race}`;
    if (this.fairnessShown === key) return;
    this.fairnessShown = key;
    const rows = view.results.map((r) =>
      h(
        "tr",
        { className: this.me && r.seat === this.me.seat ? "me" : "" },
        h("td", {}, String(r.place)),
        h("td", {}, r.name),
        h("td", {}, r.finished ? "won" : "not finished"),
        h("td", {}, formatMs(r.time_ms)),
        h("td", {}, String(r.moves)),
        h("td", {}, String(r.home)),
        h("td", {}, r.rating === undefined ? "" : `${r.rating.toFixed(0)} (${r.rating_change >= 0 ? "+" : ""}${r.rating_change.toFixed(1)})`),
      ),
    );
    const fairness = h("p", { className: "fairness", id: "fairness" }, "Checking the deal against its commitment…");
    const replays = view.daily
      ? null
      : h("p", {}, h("a", { href: `/#/replay/${view.code}`, id: "replay-link" }, "Replay this race move by move"));
    fill(this.results, 
      h(
        "div",
        { className: "panel" },
        h("h2", {}, "Results"),
        h(
          "table",
          { id: "results-table" },
          h("thead", {}, h("tr", {}, ["Place", "Racer", "", "Time", "Moves", "Home", "Rating"].map((t) => h("th", {}, t)))),
          h("tbody", {}, rows),
        ),
        fairness,
        replays,
      ),
    );
    await this.showFairness(view, fairness);
  }

  async showFairness(view, node) {
    if (!view.reveal) {
      node.textContent = view.daily
        ? `The daily deal stays secret until the day ends. Commitment: ${view.commitment ?? "—"}`
        : "No deal was revealed for this race.";
      return;
    }
    try {
      const { ok, digest } = await checkCommitment(view.variant, view.reveal.deal, view.reveal.salt, view.commitment);
      node.classList.add(ok ? "ok" : "bad");
      fill(node, 
        ok ? "✓ Fair deal: " : "✗ The revealed deal does not match the commitment: ",
        h("span", {}, `sha256("${view.variant}|${view.reveal.deal}|${view.reveal.salt}") = `),
        h("code", {}, digest),
        ok ? " equals the commitment published before the race." : ` but the commitment was ${view.commitment}.`,
      );
      node.dataset.ok = String(ok);
    } catch (error) {
      node.textContent = `Cannot check the commitment here: ${error.message}`;
    }
  }

  tick() {
    const copy = this.copy;
    if (copy && this.clock) this.clock.textContent = clockText(copy.view, copy.serverNow());
  }

  async send(fields) {
    try {
      await this.conn.request(fields);
    } catch (error) {
      this.status.show(error.message, true);
    }
  }

  async play(text) {
    this.hint = null;
    fill(this.hintList, );
    try {
      const ack = await this.conn.request({ type: "move", room: this.code, move: text });
      this.status.show(`Played ${ack.move}`);
    } catch (error) {
      const rule = error.rule ? ` (${error.rule})` : "";
      this.status.show(`${text}: ${error.message}${rule}`, true);
    }
  }

  typedMove(event) {
    event.preventDefault();
    const input = this.moveForm.querySelector("input");
    const text = input.value.trim();
    if (!text) return;
    input.value = "";
    this.play(text);
  }

  async askHint() {
    try {
      const reply = await this.conn.request({ type: "hint", room: this.code });
      const hints = reply.hints || [];
      this.hint = hints.length && hints[0].move.includes(">") ? hints[0].move.split(">")[0] : null;
      fill(this.hintList, 
        ...hints.slice(0, 5).map((hint) =>
          h("li", { onclick: () => this.play(hint.move) }, h("code", {}, hint.move), ` ${hint.reason}`),
        ),
      );
      this.status.show(hints.length ? "Hints, best first (click one to play it):" : "No useful move found.");
      this.render();
    } catch (error) {
      this.status.show(error.message, true);
    }
  }

  async copyLink() {
    const link = roomLink(this.code);
    try {
      await navigator.clipboard.writeText(link);
      this.status.show(`Copied ${link}`);
    } catch {
      this.status.show(`Send this link: ${link}`);
    }
  }

  onKey(event) {
    if (this.mode !== "race" || event.target.closest("input, textarea, select")) return;
    if (this.input && this.input.onKey(event)) {
      event.preventDefault();
      return;
    }
    if (!this.canPlay()) return;
    if (event.key === "u") this.send({ type: "undo", room: this.code });
    else if (event.key === "h" && this.copy.view.options.hints !== false) this.askHint();
    else if (event.key === "d") this.play("deal");
  }
}
