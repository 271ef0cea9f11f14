// A local copy of one room, rebuilt from the server's snapshot and updates
// (PROTOCOL.md, "Keeping a room copy"; the same as protocol/mirror.py). It knows no rules:
// patches are applied as they come.

const ZERO_PROGRESS = { home: 0, ordered: 0, moves: 0, won: false };

/** Apply one patch [pile, keep, add] to a board (a list of piles, bottom card first). */
export function applyPatch(board, patch) {
  const [pile, keep, add] = patch;
  board[pile] = board[pile].slice(0, keep).concat(add);
}

/** A board (list of piles) as a deep copy. */
export function copyBoard(board) {
  return board.map((pile) => pile.slice());
}

/** Fill in the defaults the server leaves out of a racer. */
function racerWithDefaults(racer) {
  return {
    ready: false,
    connected: true,
    finished_ms: null,
    resigned: null,
    board: null,
    ...racer,
  };
}

export class RoomCopy {
  constructor(snapshot) {
    this.reset(snapshot);
  }

  /** Replace the copy with a snapshot, whatever its version (rule 1). */
  reset(snapshot) {
    this.version = snapshot.version;
    const view = snapshot.view;
    this.view = {
      race: 1,
      commitment: null,
      reveal: null,
      results: null,
      daily: null,
      certified: null,
      ...view,
      racers: view.racers.map(racerWithDefaults),
    };
    this.receivedAt = Date.now();
    // Server time minus local time, from the snapshot's clock.
    this.clockOffset = view.clock.now - this.receivedAt;
    this.lastEvents = [];
  }

  racer(seat) {
    return this.view.racers.find((r) => r.seat === seat);
  }

  /**
   * Apply an update: true when applied or already applied, false on a gap (rules 2-4).
   */
  apply(update) {
    if (update.version <= this.version) return true;
    if (update.base !== this.version) return false;
    this.lastEvents = update.events;
    for (const event of update.events) this.applyEvent(event);
    this.version = update.version;
    return true;
  }

  applyEvent(event) {
    const view = this.view;
    const racer = event.seat !== undefined ? this.racer(event.seat) : null;
    switch (event.kind) {
      case "board": {
        if (!racer) return;
        const board = racer.board ? copyBoard(racer.board) : view.piles.map(() => []);
        for (const patch of event.patches) applyPatch(board, patch);
        racer.board = board;
        racer.progress = event.progress;
        break;
      }
      case "progress":
        if (racer) racer.progress = event.progress;
        break;
      case "joined":
        view.racers = view.racers.filter((r) => r.seat !== event.racer.seat);
        view.racers.push(racerWithDefaults(event.racer));
        view.racers.sort((a, b) => a.seat - b.seat);
        break;
      case "left":
        view.racers = view.racers.filter((r) => r.seat !== event.seat);
        if (event.creator) view.creator = event.creator;
        break;
      case "ready":
        if (racer) racer.ready = event.ready ?? false;
        break;
      case "connection":
        if (racer) racer.connected = event.connected ?? false;
        break;
      case "spectators":
        view.spectators = event.count ?? 0;
        break;
      case "state":
        view.state = event.state;
        view.clock = event.clock;
        view.race = event.race ?? 1;
        view.commitment = event.commitment ?? null;
        view.certified = event.certified ?? null;
        break;
      case "finished":
        if (racer) racer.finished_ms = event.time_ms;
        break;
      case "resigned":
        if (racer) racer.resigned = event.reason ?? "resigned";
        break;
      case "race_over":
        view.results = event.results;
        view.reveal = event.reveal ?? null;
        break;
      case "rematch":
        view.race = event.race;
        view.results = null;
        view.reveal = null;
        view.commitment = null;
        view.certified = null;
        for (const r of view.racers) {
          r.board = null;
          r.ready = false;
          r.finished_ms = null;
          r.resigned = null;
          r.progress = { ...ZERO_PROGRESS };
        }
        break;
      default:
        // Forward compatibility: ignore events of kinds this client does not know.
        break;
    }
  }

  /** The server's time now, estimated from the last clock received. */
  serverNow() {
    return Date.now() + this.clockOffset;
  }
}
