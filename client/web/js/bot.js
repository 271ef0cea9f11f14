// "Race a bot", as the terminal client does it (client/tui/botrace.py, client/lib/bot.py): the
// page opens a private room for two and readies its player; a bot racer, run by this page on a
// websocket of its own (saying `bot: true` in its hello, so the server marks its seat and never
// rates it), joins and readies, so the countdown starts at once. The bot knows no rules: it
// plays the server's hints best first (every legal move once they run dry), takes moves back
// out of dead ends, and resigns when stuck. It stays for rematches and leaves once alone.
// The levels are the terminal's (client/lib/bot.py STYLES and level_text): the same pace, the
// same chance of taking another hint than the best at a new position, the same words.
//
// The bot lives in the tab that shows its room: which rooms have one (and each bot's resume
// token) is kept in sessionStorage, so a reload of /r/CODE brings the same bot back to its seat.

import { Connection, ServerError, serverUrl } from "./connection.js";

const BOTS_KEY = "solitaire-race.bots";

/**
 * How each level plays: seconds between moves on average, the chance at a new position of taking
 * another hint than the best (a stray it takes back at a dead end), patience (moves without getting
 * further before it resigns), and its description (the terminal client's words).
 */
export const LEVELS = {
  easy: { delay: 3.0, noise: 0.5, patience: 60, text: "easy: a move every 3 s, often strays from the hints" },
  medium: { delay: 2.0, noise: 0.15, patience: 150, text: "medium: a move every 2 s, strays now and then" },
  hard: { delay: 0.3, noise: 0, patience: 300, text: "hard: a move every 0.3 s, never strays" },
};

const MAX_MOVES = 600;
/** Seconds a bot waits for a rematch after a race before it leaves. */
const LINGER_MS = 600_000;

function botsWanted() {
  try {
    return JSON.parse(sessionStorage.getItem(BOTS_KEY) || "{}");
  } catch {
    return {};
  }
}

function remember(code, level) {
  const bots = botsWanted();
  if (level) bots[code] = level;
  else delete bots[code];
  sessionStorage.setItem(BOTS_KEY, JSON.stringify(bots));
  if (!level) {
    for (const key of ["name", "resume"]) sessionStorage.removeItem(`${BOTS_KEY}.${code}.${key}`);
  }
}

/**
 * Open a private room of `variant` for the page's player and a bot of `level`; ready the player.
 * Resolves with the room's code (the bot joins once the room's page is open: `resumeBot`).
 */
export async function openBotRace(conn, variant, level) {
  const joined = await conn.request({ type: "create_room", variant, options: { max_racers: 2, public: false } });
  remember(joined.room, level);
  await conn.request({ type: "ready", room: joined.room });
  return joined.room;
}

/** If this tab called a bot into room `code`, start it (again). Returns the bot, or null. */
export function resumeBot(code) {
  const level = botsWanted()[code];
  if (!LEVELS[level]) return null;
  const bot = new BotRacer(code, level);
  bot.run().catch((error) => console.warn(`the bot of room ${code} stopped:`, error.message));
  return bot;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function shuffle(items) {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

export class BotRacer {
  constructor(code, level) {
    this.code = code;
    this.level = level;
    this.style = LEVELS[level];
    this.useHints = true;
    this.conn = new Connection(serverUrl(), { storage: sessionStorage, prefix: `${BOTS_KEY}.${code}.`, bot: true });
  }

  get copy() {
    return this.conn.rooms.get(this.code);
  }

  get me() {
    const copy = this.copy;
    return copy ? copy.view.racers.find((r) => r.player === this.conn.player) : undefined;
  }

  /** The race is over for the bot: finished, or it won or stopped. */
  done() {
    const copy = this.copy;
    if (!copy || copy.view.state === "finished") return true;
    const me = this.me;
    return !me || me.finished_ms !== null || Boolean(me.resigned);
  }

  alone() {
    return this.copy.view.racers.every((r) => r.player === this.conn.player);
  }

  /** Join (or come back to) the room, then race in it, rematch after rematch, until alone. */
  async run() {
    try {
      await this.conn.start(`Bot (${this.level})`);
    } catch (error) {
      this.conn.close(); // no retrying in the background: a reload of the page tries again
      throw error;
    }
    try {
      await this.conn.request({ type: "join", room: this.code });
    } catch (error) {
      // No room, no seat left, or a race the bot has no seat in: nothing to do here.
      remember(this.code, null);
      this.conn.close();
      throw error;
    }
    const code = this.code;
    await this.conn.waitRoom(code, () => Boolean(this.me));
    for (;;) {
      if (this.copy.view.state === "waiting") {
        await this.conn.request({ type: "ready", room: code }).catch(() => {});
        await this.conn.waitRoom(code, (copy) => copy.view.state !== "waiting" || this.alone(), Infinity);
        if (this.copy.view.state === "waiting") break; // everyone else left before the race
      }
      await this.play();
      try {
        await this.conn.waitRoom(code, (copy) => copy.view.state === "waiting" || this.alone(), LINGER_MS);
      } catch {
        break; // no rematch came
      }
      if (this.alone()) break;
    }
    remember(code, null);
    await this.conn.leave(code);
    this.conn.close();
  }

  /**
   * Moves not yet tried from this board: the hints, best first (at a new position, with the level's
   * chance, another hint first: a stray); else every legal move, shuffled.
   */
  async candidates(tried) {
    if (this.useHints) {
      try {
        const reply = await this.conn.request({ type: "hint", room: this.code });
        const fresh = (reply.hints || []).map((hint) => hint.move).filter((move) => !tried.has(move));
        if (!tried.size && fresh.length > 1 && Math.random() < this.style.noise) {
          const other = 1 + Math.floor(Math.random() * (fresh.length - 1));
          [fresh[0], fresh[other]] = [fresh[other], fresh[0]];
        }
        if (fresh.length) return fresh;
      } catch (error) {
        if (error.code !== "hints-disabled") throw error;
        this.useHints = false;
      }
    }
    const legal = await this.conn.request({ type: "legal_moves", room: this.code });
    return shuffle((legal.moves || []).filter((move) => !tried.has(move)));
  }

  /** Play `move` (or undo, with none) and wait until the room copy shows it. */
  async send(move) {
    const fields = move ? { type: "move", room: this.code, move } : { type: "undo", room: this.code };
    const ack = await this.conn.request(fields);
    await this.conn.waitRoom(this.code, (copy) => copy.version >= (ack.version || 0));
  }

  async pause() {
    await sleep(this.style.delay * 1000 * (0.5 + Math.random()));
  }

  /** Wait for the race, then play until the bot is done. */
  async play() {
    const code = this.code;
    await this.conn.waitRoom(code, (copy) => ["racing", "finished"].includes(copy.view.state), Infinity);
    await this.conn.waitRoom(code, () => this.done() || Boolean(this.me.board));
    const undo = this.copy.view.options.undo !== false;
    const tried = new Map();
    let played = 0;
    let depth = 0;
    let sinceProgress = 0;
    let best = [-1, -1];
    let moved = false;
    while (!this.done()) {
      const me = this.me;
      const { home, ordered } = me.progress;
      if (home > best[0] || (home === best[0] && ordered > best[1])) {
        best = [home, ordered];
        sinceProgress = 0;
      }
      const key = JSON.stringify(me.board);
      const revisit = moved && tried.has(key) && undo;
      if (!tried.has(key)) tried.set(key, new Set());
      const here = tried.get(key);
      try {
        const stuck = played >= MAX_MOVES || sinceProgress >= this.style.patience;
        const candidates = revisit || stuck ? [] : await this.candidates(here);
        if (!candidates.length && depth > 0 && undo && !stuck) {
          // A dead end, or a board already explored: take the move back, try another.
          await this.send(null);
          depth -= 1;
          moved = false;
          sinceProgress += 1;
          continue;
        }
        if (!candidates.length) {
          await this.conn.request({ type: "resign", room: code });
          break;
        }
        here.add(candidates[0]);
        await this.send(candidates[0]);
      } catch (error) {
        if (!(error instanceof ServerError)) throw error;
        if (error.code === "not-racing") break; // the race ended meanwhile
        if (error.code === "illegal-move" || error.code === "invalid-move") continue; // a stale hint
        if (error.code === "disconnected") {
          await this.conn.ready;
          continue;
        }
        throw error;
      }
      played += 1;
      depth += 1;
      moved = true;
      sinceProgress += 1;
      await this.pause();
    }
  }
}
