// One websocket to the race server, speaking PROTOCOL.md: MessagePack maps in binary frames.
// It says hello (with the resume token kept in localStorage), answers each request with the
// reply naming its id, keeps a RoomCopy of every room it follows (asking for a snapshot on a
// gap) and reconnects by itself, resuming, when the connection drops. Accounts: register, log
// in, change the password (each answered by a new token, kept like a guest's) and log out; a
// 4001 close (logged out, here or from elsewhere) drops the token and starts again as a guest.
// Passwords only pass through to the socket: nothing stores them. A `joined` that names the
// room's home (PROTOCOL.md, "Going home") moves a page in that one room to its server: a new
// socket there (`?home=`, which the balancer routes), resumed, then the old one closed.

import { RoomCopy } from "./mirror.js";

const { encode, decode } = globalThis.MessagePack;

/** Where the page keeps its player's name and resume token (a bot's connection keeps its own). */
const PREFIX = "solitaire-race.";
/** The close code of a session that ended: logged out, here or everywhere, or a new password. */
const LOGGED_OUT = 4001;
/** Milliseconds a room's home has to welcome a page moving there. */
const HELLO_TIMEOUT = 10000;

/** A new guest's name, told apart from the other guests': `Guest 4821` (the player may change it). */
export function guestName() {
  return `Guest ${1000 + Math.floor(Math.random() * 9000)}`;
}

/** An error answer from the server: `code`, `message` (for people), `rule` for illegal moves. */
export class ServerError extends Error {
  constructor(reply) {
    super(reply.message);
    this.code = reply.code;
    this.rule = reply.rule ?? null;
  }
}

export class Connection {
  /**
   * `options`: `storage` and `prefix` say where the name and resume token are kept
   * (the page's: localStorage, `solitaire-race.`); `bot: true` says so in the hello.
   */
  constructor(url, { storage = localStorage, prefix = PREFIX, bot = false } = {}) {
    this.url = url;
    /** Sockets replaced by one to the room's home: their close is no reason to reconnect. */
    this.replaced = new WeakSet();
    this.homing = false;
    /** Ids of the requests that hold a place in a line (the connection's: it stays). */
    this.lines = new Set();
    this.retryTimer = null;
    this.storage = storage;
    this.nameKey = `${prefix}name`;
    this.resumeKey = `${prefix}resume`;
    this.bot = bot;
    this.nextId = 1;
    this.pending = new Map();
    this.rooms = new Map();
    this.roles = new Map();
    this.resyncing = new Set();
    this.forgotten = new Set();
    this.listeners = new Set();
    this.player = null;
    this.name = null;
    this.account = false;
    this.socket = null;
    this.ready = null;
    this.closed = false;
    this.retry = 250;
    this.state = "connecting";
  }

  /** Open the socket and say hello as `name` (else the stored name, else a new guest's). Resolves on welcome. */
  start(name) {
    this.wantedName = name || this.storage.getItem(this.nameKey) || guestName();
    this.ready = this.open();
    return this.ready;
  }

  /** Say hello again under a new name (a new connection; the resume token keeps the player). */
  async rename(name) {
    this.storage.setItem(this.nameKey, name);
    this.wantedName = name;
    const back = this.nextWelcome();
    // The close handler reconnects.
    if (this.socket) this.socket.close(1000);
    await back;
  }

  /** Open a socket and say hello. `trial`: a move to a room's home, which takes the place of
   * the socket in use only once welcomed (and, failing, leaves it in use). */
  open(trial = false) {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      socket.binaryType = "arraybuffer";
      if (!trial) this.socket = socket;
      let welcomed = false;
      let helloId = null;
      // A home that does not welcome in time is given up: the page stays where it is.
      if (trial) setTimeout(() => welcomed || socket.close(), HELLO_TIMEOUT);
      socket.onopen = () => {
        const hello = { type: "hello", id: this.nextId++, protocol: 1, name: this.wantedName };
        if (this.bot) hello.bot = true;
        const resume = this.storage.getItem(this.resumeKey);
        if (resume) hello.resume = resume;
        helloId = hello.id;
        socket.send(encode(hello));
      };
      socket.onmessage = (event) => {
        if (typeof event.data === "string") return;
        let message;
        try {
          message = decode(new Uint8Array(event.data));
        } catch (error) {
          console.warn("ignored a frame that is not MessagePack", error);
          return;
        }
        if (!welcomed) {
          if (message.type === "welcome") {
            if (this.closed) {
              socket.close(1000);
              reject(new Error("the connection was closed"));
              return;
            }
            welcomed = true;
            this.socket = socket;
            this.keep(message);
            this.account = Boolean(message.account);
            this.retry = 250;
            const down = this.state !== "connected";
            this.state = "connected";
            // A move home welcomed while the old socket's reconnection waited replaces it.
            clearTimeout(this.retryTimer);
            if (this.reconnected) {
              this.reconnected = null;
              this.release(message);
            }
            resolve(message);
            if (!trial || down) this.emit("connected", message);
            this.restoreRooms();
            return;
          }
          if (message.type === "error" && message.id === helloId) {
            if (!trial) {
              // This server no longer knows the token: become a new player.
              if (message.code === "invalid-token") this.storage.removeItem(this.resumeKey);
              this.emit("error", message);
            }
            socket.close();
            return;
          }
        }
        this.dispatch(message);
      };
      socket.onclose = (event) => {
        for (const [id, entry] of this.pending) {
          if (entry.socket !== socket) continue;
          entry.reject(new ServerError({ code: "disconnected", message: "the connection dropped" }));
          this.pending.delete(id);
        }
        if (this.replaced.has(socket)) return; // let go after a move home
        if (trial && !welcomed) {
          reject(new Error(`could not reach the room's home (close code ${event.code})`));
          return; // the socket in use stays
        }
        this.state = "disconnected";
        this.lines.clear(); // the server drops a closed connection's places in lines
        if (event.code === LOGGED_OUT) this.loggedOut(event.reason);
        this.resyncing = new Set(this.rooms.keys());
        this.emit("disconnected", event);
        if (!welcomed) reject(new Error(`could not connect (close code ${event.code})`));
        if (!this.closed) {
          // Requests made meanwhile wait for the next welcome, however many attempts it takes.
          if (!this.reconnected) {
            this.reconnected = new Promise((resolve) => {
              this.release = resolve;
            });
            this.ready = this.reconnected;
          }
          const wait = this.retry * (1 + Math.random());
          this.retry = Math.min(this.retry * 2, 8000);
          this.retryTimer = setTimeout(() => {
            if (this.closed) return; // closed meanwhile: no more attempts
            this.open().catch(() => {}); // its welcome releases the requests waiting
          }, wait);
        }
      };
    });
  }

  /** Keep the player, name and token of a `welcome` or `account` reply. */
  keep(reply) {
    this.player = reply.player;
    this.name = reply.name;
    this.storage.setItem(this.resumeKey, reply.resume);
    this.storage.setItem(this.nameKey, reply.name);
  }

  /** `register`, `login` or `change_password`: resolves once the account's token is kept. */
  async becomeAccount(fields) {
    const reply = await this.request(fields);
    this.keep(reply);
    this.account = true;
    this.emit("account", reply);
    return reply;
  }

  register(name, password) {
    return this.becomeAccount({ type: "register", name, password });
  }

  /** Log in as `name`. The server refuses while the connection follows a room: stop watching
   * and leave finished races first (a room still waiting or racing is the player's to leave). */
  async login(name, password) {
    for (const [room, role] of [...this.roles]) {
      if (role === "spectator" || this.rooms.get(room)?.view.state === "finished") await this.leave(room);
    }
    return this.becomeAccount({ type: "login", name, password });
  }

  changePassword(password, newPassword) {
    return this.becomeAccount({ type: "change_password", password, new_password: newPassword });
  }

  /** Log out (of every device with `everywhere`); resolves once the page is a new guest. */
  async logout(everywhere = false) {
    const back = this.nextWelcome();
    await this.request(everywhere ? { type: "logout", everywhere: true } : { type: "logout" });
    await back;
  }

  /** The server ended this session (4001): its token is void, and so are the seats it held. */
  loggedOut(reason) {
    this.storage.removeItem(this.resumeKey);
    for (const room of [...this.rooms.keys(), ...this.roles.keys()]) this.forget(room);
    this.account = false;
    this.emit("logged-out", { reason });
  }

  /** Resolves with the next `welcome` (after a reconnection). */
  nextWelcome() {
    return new Promise((resolve) => {
      const off = this.on((kind, message) => {
        if (kind === "connected") {
          off();
          resolve(message);
        }
      });
    });
  }

  close() {
    this.closed = true;
    if (this.socket) this.socket.close(1000);
  }

  /** Listen to everything: `listener(kind, message, room)`; returns a function that stops it. */
  on(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(kind, message, room) {
    for (const listener of [...this.listeners]) {
      try {
        listener(kind, message, room);
      } catch (error) {
        console.error("a listener failed", error);
      }
    }
  }

  /** Send a request (without `id`) and resolve with the reply naming its id; reject with ServerError. */
  async request(fields) {
    const { reply } = await this.exchange(fields);
    return reply;
  }

  /** Send a request; resolve with its `id` and `reply` (a promise of the answer), for requests
   * answered again later under the same id (`quick_match`'s `joined`). */
  async exchange(fields) {
    await this.ready;
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
      throw new ServerError({ code: "disconnected", message: "not connected to the server" });
    }
    const id = this.nextId++;
    const message = { ...fields, id };
    const entry = { socket: this.socket };
    const reply = new Promise((resolve, reject) => {
      entry.resolve = resolve;
      entry.reject = reject;
    });
    entry.done = reply;
    this.pending.set(id, entry);
    entry.socket.send(encode(message));
    return { id, reply };
  }

  /** Move to `room`'s home server unless the page follows other rooms too (it would go back
   * and forth) or holds a place in a line (the old socket's), is moving already, or has that
   * address already (the home is down). The old socket is closed once its requests are
   * answered; on a failure the page stays. */
  async goHome(room, home) {
    const url = homeAddress(this.url, home);
    const alone = this.roles.size === 1 && this.roles.has(room) && this.lines.size === 0;
    if (!alone || this.homing || this.closed || url === this.url || this.state !== "connected") return;
    this.homing = true;
    const old = this.socket;
    const from = this.url;
    this.url = url;
    try {
      await this.open(true);
    } catch (error) {
      this.url = from;
      console.info("stayed on this server:", error.message);
      return;
    } finally {
      this.homing = false;
    }
    this.replaced.add(old);
    const answered = [...this.pending.values()].filter((entry) => entry.socket === old).map((entry) => entry.done);
    await Promise.race([Promise.allSettled(answered), new Promise((resolve) => setTimeout(resolve, HELLO_TIMEOUT))]);
    old.close(1000);
  }

  /**
   * Wait in the quick-match line of `variant`: resolves once in line with `joined`, a promise
   * of the `joined` of the race that forms (it never settles if none does).
   */
  quickMatch(variant) {
    return this.waitInLine({ type: "quick_match", variant });
  }

  /**
   * Send a request that puts the player in a line (`quick_match`, `join_arena`): resolves once
   * acknowledged with `joined`, a promise of the `joined` that carries the request's id when a
   * race forms (it never settles if none does).
   */
  async waitInLine(request) {
    const { id, reply } = await this.exchange(request);
    this.lines.add(id);
    let off = null;
    const joined = new Promise((resolve) => {
      off = this.on((kind, message) => {
        if (kind === "joined" && message.id === id) {
          off();
          resolve(message);
        }
      });
    });
    try {
      await reply;
    } catch (error) {
      off();
      this.lines.delete(id);
      throw error;
    }
    return { joined };
  }

  /** After a reconnection: follow again every room followed before (seats come back by themselves). */
  async restoreRooms() {
    for (const [room, role] of [...this.roles]) {
      try {
        if (role === "spectator") await this.request({ type: "spectate", room });
        else await this.request({ type: "snapshot", room });
      } catch (error) {
        this.forget(room);
      }
    }
  }

  /** Resolve with the copy of `room` once it exists and `predicate(copy)` holds (`timeout` ms: Infinity waits for ever). */
  waitRoom(room, predicate = () => true, timeout = 15000) {
    return new Promise((resolve, reject) => {
      const check = () => {
        const copy = this.rooms.get(room);
        if (copy && predicate(copy)) {
          off();
          clearTimeout(timer);
          resolve(copy);
          return true;
        }
        return false;
      };
      const off = this.on((kind, message, changed) => {
        if (kind === "room" && changed === room) check();
      });
      const timer = Number.isFinite(timeout)
        ? setTimeout(() => {
            off();
            reject(new Error(`room ${room} did not arrive`));
          }, timeout)
        : null;
      check();
    });
  }

  forget(room) {
    this.rooms.delete(room);
    this.roles.delete(room);
    this.resyncing.delete(room);
    this.forgotten.add(room);
  }

  async leave(room) {
    try {
      await this.request({ type: "leave", room });
    } catch (error) {
      // Already gone: nothing to leave.
    } finally {
      this.forget(room);
    }
  }

  dispatch(message) {
    let room = null;
    switch (message.type) {
      case "snapshot": {
        room = message.room;
        this.resyncing.delete(room);
        this.forgotten.delete(room);
        const copy = this.rooms.get(room);
        if (copy) copy.reset(message);
        else this.rooms.set(room, new RoomCopy(message));
        break;
      }
      case "update": {
        room = message.room;
        if (this.resyncing.has(room) || this.forgotten.has(room)) return;
        const copy = this.rooms.get(room);
        // Its snapshot follows the joined; or seen already (on the socket before a move home).
        if (!copy || message.version <= copy.version) return;
        if (!copy.apply(message)) {
          // A gap: ask once for the whole room again; updates wait for it.
          this.resyncing.add(room);
          this.request({ type: "snapshot", room }).catch(() => {});
          return;
        }
        break;
      }
      case "joined":
        this.roles.set(message.room, message.role);
        this.forgotten.delete(message.room);
        this.lines.delete(message.id); // a race formed: that place in its line is over
        if (message.home) this.goHome(message.room, message.home);
        if (message.seat !== undefined && message.role === "racer") this.emit("seated", message, message.room);
        break;
      case "goodbye":
        this.emit("goodbye", message);
        break;
      default:
        break;
    }
    const entry = message.id !== undefined ? this.pending.get(message.id) : undefined;
    // A snapshot carries an id only when it answers a snapshot request.
    if (entry && !(message.type === "snapshot" && message.id === undefined)) {
      this.pending.delete(message.id);
      if (message.type === "error") entry.reject(new ServerError(message));
      else entry.resolve(message);
    }
    if (room) this.emit("room", message, room);
    else this.emit(message.type, message);
  }
}

/** `url` with its `home` query parameter set to `home` (PROTOCOL.md, "Going home"). */
export function homeAddress(url, home) {
  const address = new URL(url);
  address.searchParams.set("home", home);
  return address.toString();
}

/** The server's websocket address: the page's own host. */
export function serverUrl() {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${location.host}/`;
}
