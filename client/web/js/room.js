// A room on screen: racing in it (`/r/CODE`) or watching it (`#/watch/CODE`). Everything drawn
// comes from the room copy the connection keeps; the rules stay on the server.

import { BoardView } from "./board.js";
import { ServerError } from "./connection.js";
import { RaceControls } from "./controls.js";
import { ArenaRaceNote } from "./arenas.js";
import { copyId } from "./challenges.js";
import { fill, formatMs, h, roomCode, statusLine, variantName } from "./dom.js";
import { shownName } from "./ghost.js";
import { HintBar } from "./hints.js";
import { PlayInput } from "./play.js";
import { ResultsPanel } from "./results.js";
import { joinForm, missingPage, raceHere } from "./seat.js";

function roomLink(code) {
  return `${location.origin}/r/${code}`;
}

/** The room's clock: only times (the state pill beside it names the state). */
function clockText(view, now) {
  const clock = view.clock;
  switch (view.state) {
    case "countdown":
      return `starts in ${Math.max(0, (clock.countdown_ends - now) / 1000).toFixed(1)} s`;
    case "racing": {
      const left = clock.ends ? ` · ${formatMs(clock.ends - now)} left` : "";
      return `${formatMs(now - clock.started)}${left}`;
    }
    case "finished":
      return clock.started && clock.finished ? formatMs(clock.finished - clock.started) : "";
    default:
      return "";
  }
}

/** Piles at the top of a board, not in its tableau (as the terminal client's TOP_KINDS). */
const TOP_KINDS = new Set(["stock", "cell", "foundation"]);

/** Whether the game has a stock to deal (Scorpion does, Antares not): the piles the server sends say. */
function hasStock(piles) {
  return piles.some((pile) => pile.kind === "stock");
}

/**
 * Moves in notation made from the room's pile names, as the terminal client's move box shows them
 * (client/render/keys.py move_examples): Scorpion `QS>5, deal`; Antares `QS>f1, 7H>c1, c2>h`.
 */
export function moveExamples(piles) {
  const tableau = piles.filter((pile) => !TOP_KINDS.has(pile.kind)).map((pile) => pile.name);
  const cells = piles.filter((pile) => pile.kind === "cell").map((pile) => pile.name);
  const examples = tableau.length ? [`QS>${tableau[Math.min(4, tableau.length - 1)]}`] : [];
  if (hasStock(piles)) examples.push("deal");
  if (cells.length) examples.push(`7H>${cells[0]}`, `${cells[Math.min(1, cells.length - 1)]}>h`);
  return examples;
}

/** What a racer's badge says beyond the room's state ("" while they race: the room says so). */
function racerState(racer, view) {
  if (racer.finished_ms !== null) return `won in ${formatMs(racer.finished_ms)}`;
  if (racer.resigned) return racer.resigned === "resigned" ? "resigned" : racer.resigned;
  // A ghost is always ready: its readiness is no news.
  if (view.state === "waiting" && !racer.ghost) return racer.ready ? "ready" : "not ready";
  return "";
}

export class RoomScreen {
  /** `mode`: "race" (a seat, from /r/CODE) or "watch" (spectating). */
  constructor(conn, code, mode) {
    this.conn = conn;
    this.code = code.toUpperCase();
    this.mode = mode;
    this.boards = new Map();
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
    this.title = h("h1", {}, "Room ", roomCode(this.code));
    this.info = h("div", { className: "toolbar" });
    this.controls = h("div", { className: "toolbar" });
    this.buttons = new RaceControls(this.controls, this.conn, {
      send: (fields) => this.send(fields),
      undo: () => this.undo(),
      hint: () => this.askHint(),
      resign: () => this.resign(),
      copyLink: () => this.copyLink(),
      redraw: () => this.copy && this.renderControls(this.copy.view),
    });
    this.moveForm = h(
      "form",
      { className: "toolbar", onsubmit: (e) => this.typedMove(e) },
      h("label", { for: "move-text" }, "Type a move"),
      // The examples come from the room's piles (render), so each game shows its own pile names.
      h("input", { type: "text", id: "move-text", autocomplete: "off" }),
      h("button", { type: "submit" }, "Play"),
    );
    // Hidden until the room says the player may move (a room that does not exist never does).
    this.moveForm.hidden = true;
    // One line kept for the hints while the player races (hints.js).
    this.hints = new HintBar((move) => this.play(move));
    this.panels = h("div", { className: "boards" });
    this.results = new ResultsPanel(this.conn);
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
      this.mode === "race" ? this.hints.node : null,
      this.panels,
      this.results.node,
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
    if (this.arenaNote) this.arenaNote.stop();
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
      if (error instanceof ServerError && error.code === "no-such-room") {
        this.showMissing();
        return;
      }
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
      if (error.code === "no-such-room") this.showMissing();
      else this.status.show(`Cannot watch: ${error.message}`, true);
    }
  }

  /** The page of a code no room has: no seat to take, nothing to play. */
  showMissing() {
    missingPage(this.root, this.code);
  }

  showJoin() {
    joinForm(this.joinPanel, this.conn, this.code, {
      status: this.status,
      seated: () => Boolean(this.me),
      joined: () => this.render(),
      missing: () => this.showMissing(),
    });
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
    // A new state makes the last word about the old one stale (errors stay until replaced).
    if (this.shownState && this.shownState !== view.state && !this.status.classList.contains("error")) this.status.show("");
    this.shownState = view.state;
    this.sayResigned(view);
    this.root.dataset.state = view.state;
    this.root.dataset.version = String(copy.version);
    fill(this.title, `${variantName(view.variant)} · room `, roomCode(view.code));
    this.renderInfo(view);
    this.renderControls(view);
    this.renderBoards(view);
    this.results.render(view, () => (this.me ? this.me.seat : null));
  }

  renderInfo(view) {
    const delay = Number(view.options.spectator_delay ?? 0);
    const watching = this.mode === "watch";
    const clock = clockText(view, this.copy.serverNow());
    this.clock = h("span", { className: "clock", id: "clock", hidden: !clock }, clock);
    fill(
      this.info,
      h("span", { className: `pill ${view.state}`, id: "room-state" }, view.state),
      this.clock,
      // A ghost takes no seat of the room's (a ghost race is a practice room for one and its ghost).
      h("span", { className: "muted" }, `${view.racers.filter((r) => !r.ghost).length}/${view.options.max_racers ?? 2} racers`),
      view.racers.some((r) => r.ghost) ? h("span", { className: "pill", id: "ghost-race" }, "ghost race · not rated") : null,
      h("span", { className: "muted", id: "spectators" }, `${view.spectators} watching`),
      // A delay is worth a word only when there is one.
      delay > 0
        ? h(
            "span",
            { className: "muted", id: "delay" },
            watching ? `you see this room ${delay} s behind` : `spectators see it ${delay} s behind`,
          )
        : null,
      view.daily ? h("span", { className: "pill" }, `daily ${view.daily.date}${view.daily.ranked ? " · ranked" : " · practice"}`) : null,
      view.challenge ? this.challengeNote(view) : null,
      view.arena ? this.arenaPart(view) : null,
      view.bracket
        ? h("a", { href: `/#/bracket/${view.bracket}`, className: "pill", id: "bracket-note" }, `bracket ${view.bracket} · your round's run, one attempt`)
        : null,
      view.options.deal ? h("span", { className: "muted" }, `deal ${view.options.deal}`) : null,
      view.certified === false
        ? h("span", { className: "pill", id: "uncertified" }, "random deal, not certified winnable")
        : null,
    );
  }

  /** An arena's race: its name, the way back to the arena, and (racing on) the next race (arenas.js). */
  arenaPart(view) {
    if (!this.arenaNote) this.arenaNote = new ArenaRaceNote(this.conn, this.code, view.arena, this.mode === "race" && Boolean(this.me));
    this.arenaNote.update(view);
    return this.arenaNote.node;
  }

  /**
   * A challenge's run: its id, whether it is rated, and whose run it is (the view's side); the
   * challenger's racer also gets the id to give the rival, with a copy button.
   */
  challengeNote(view) {
    const id = view.challenge;
    const side = view.challenge_side;
    const mine = this.mode === "race" && Boolean(this.me);
    const whose = side === 0 ? (mine ? "you challenged" : "the challenger's run") : side === 1 ? (mine ? "you were challenged" : "the challenged player's run") : null;
    const rated = typeof view.challenge_rated === "boolean" ? (view.challenge_rated ? "rated" : "casual") : null;
    const give = mine && side !== 1;
    return h(
      "span",
      { id: "challenge-note" },
      "Challenge ",
      h("code", { id: "challenge-id" }, id),
      rated ? [" ", h("span", { className: "pill", id: "challenge-rated" }, rated)] : null,
      whose ? [" · ", h("span", { id: "challenge-side" }, whose)] : null,
      give ? [": give this id to your rival ", h("button", { type: "button", className: "small", id: "copy-challenge", onclick: () => copyId(id, this.status) }, "Copy")] : null,
      mine && side === 1 ? ": you play the same deal as your rival" : null,
    );
  }

  renderControls(view) {
    if (this.mode !== "race" || !this.me) {
      fill(this.controls, this.mode === "watch" ? raceHere(view) : null);
      return;
    }
    const playing = this.canPlay();
    this.buttons.render(view, this.me, playing);
    this.moveForm.hidden = !playing;
    this.moveForm.querySelector("input").placeholder = moveExamples(view.piles).join(", ");
    this.hints.node.hidden = !playing || view.options.hints === false;
    if (this.hints.node.hidden) this.clearHints();
  }

  /** Once a race, when the player's resignation shows: say so (in place of what the last move said). */
  sayResigned(view) {
    const me = this.me;
    if (this.mode !== "race" || !me || me.resigned !== "resigned" || this.resignedIn === view.race) return;
    this.resignedIn = view.race;
    this.status.show("You resigned.");
  }

  async resign() {
    this.clearHints();
    await this.send({ type: "resign", room: this.code });
    if (this.copy) this.render();
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
      const state = racerState(racer, view);
      fill(
        entry.head,
        h("span", { className: "name" }, isMe ? `${racer.name} (you)` : shownName(racer)),
        state ? h("span", { className: "badge" }, state) : null,
        h("span", {}, `${racer.progress.home}/52 home · ${racer.progress.ordered} in order · ${racer.progress.moves} moves`),
        racer.bot ? h("span", { className: "badge" }, "bot") : null,
        racer.connected || racer.ghost ? null : h("span", { className: "badge" }, "disconnected"),
        this.challengeLink(racer, view),
      );
      entry.bar.value = racer.progress.home;
      if (racer.board) {
        if (isMe && this.mode === "race") this.attachInput(entry);
        const marks = isMe && this.input ? { ...this.input.marks(), hint: this.hints.card } : {};
        entry.view.small = !isMe && this.mode === "race";
        entry.view.draw(view.piles, racer.board, marks);
      } else {
        fill(
          entry.host,
          h(
            "p",
            { className: "muted" },
            view.state === "racing" ? "Board hidden while you race: progress only." : "The deal appears when the race starts.",
          ),
        );
      }
      panels.push(entry.panel);
    }
    // Re-placed only when the order changed: moving a panel, even to where it is, ends a
    // click in progress on it.
    const placed = [...this.panels.children];
    if (placed.length !== panels.length || placed.some((node, i) => node !== panels[i])) fill(this.panels, ...panels);
  }

  /** After the race, a link to challenge another person of the room (not a bot, not a ghost). */
  challengeLink(racer, view) {
    if (view.state !== "finished" || racer.bot || racer.ghost || !racer.player || racer.player === this.conn.player) return null;
    const href = `/#/challenges/rival/${encodeURIComponent(racer.player)}/${encodeURIComponent(racer.name)}`;
    return h("a", { href, className: "challenge-racer" }, "Challenge");
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

  tick() {
    const copy = this.copy;
    if (!copy || !this.clock) return;
    const text = clockText(copy.view, copy.serverNow());
    // Written only when it changes: each write makes the page recompute its style.
    if (this.clock.textContent !== text) this.clock.textContent = text;
    if (this.clock.hidden !== !text) this.clock.hidden = !text;
  }

  async send(fields) {
    try {
      await this.conn.request(fields);
    } catch (error) {
      this.status.show(error.message, true);
    }
  }

  clearHints() {
    this.hints.clear();
  }

  async play(text) {
    this.clearHints();
    try {
      const ack = await this.conn.request({ type: "move", room: this.code, move: text });
      this.status.show(`Played ${ack.move}`);
    } catch (error) {
      const rule = error.rule ? ` (${error.rule})` : "";
      this.status.show(`${text}: ${error.message}${rule}`, true);
    }
  }

  async undo() {
    this.clearHints();
    try {
      await this.conn.request({ type: "undo", room: this.code });
      this.status.show("Took the last move back.");
    } catch (error) {
      this.status.show(error.message, true);
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
      this.hints.show(reply.hints || []);
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
    if (event.key === "u") this.undo();
    else if (event.key === "h" && this.copy.view.options.hints !== false) this.askHint();
    else if (event.key === "d" && hasStock(this.copy.view.piles)) this.play("deal"); // Antares has no stock
  }
}
