// A Solitaire Race bot written against the published schema alone (protocol/schema.json).
//
//   npm ci && node bot.mjs ws://127.0.0.1:8765 ../../protocol/schema.json [moves]
//
// It says hello, creates a one-racer Antares room, says ready, and once the race runs plays
// the legal moves the server lists (`legal_moves`), at most [moves] of them (default 20);
// then, unless its game is over already, it resigns, and it waits for the race to end. It
// prints one JSON line (what it saw) and exits 0; on anything unexpected it exits 1.
//
// Every name it uses comes from the schema: the message types (the discriminator mappings of
// ClientMessage, ServerMessage and RoomEvent), every field it sends or reads (a field is
// looked up in the message's component before it is used, and an omitted one reads as the
// schema's default), the protocol version (x-protocol-version) and the game (CreateRoom's
// variant enum). Every frame it sends and receives is validated against the schema first.
// Frames are MessagePack (@msgpack/msgpack); the schema describes their structure.

import { readFileSync } from "node:fs";
import { decode, encode } from "@msgpack/msgpack";

const TIMEOUT_MS = 60_000;

class SchemaError extends Error {}

/** The JSON Schema keywords the validator below knows; a schema using another is refused. */
const KEYWORDS = new Set([
  "$ref", "anyOf", "discriminator", "enum", "type", "properties", "required",
  "additionalProperties", "items", "prefixItems", "minItems", "maxItems", "minimum",
  "maximum", "minLength", "maxLength", "pattern", "title", "description", "default",
]);

/** The schema, with what the bot needs of it: unions, fields, defaults, validation. */
class Schema {
  constructor(document) {
    this.document = document;
    this.defs = document.$defs;
    this.client = this.union("ClientMessage");
    this.server = this.union("ServerMessage");
    this.events = this.union("RoomEvent");
  }

  union(name) {
    const union = this.defs[name];
    if (!union?.discriminator) throw new SchemaError(`the schema has no union ${name}`);
    const { propertyName, mapping } = union.discriminator;
    return { name, tagField: propertyName, members: new Map(Object.entries(mapping)) };
  }

  resolve(ref) {
    if (!ref.startsWith("#/")) throw new SchemaError(`not a local reference: ${ref}`);
    let node = this.document;
    for (const part of ref.slice(2).split("/")) node = node?.[part];
    if (node === undefined) throw new SchemaError(`${ref} names nothing`);
    return node;
  }

  /** The schema of `value` seen through references and optional (nil) branches. */
  concrete(node, value) {
    for (;;) {
      if (node.$ref) node = this.resolve(node.$ref);
      else if (node.anyOf && node.discriminator && value && typeof value === "object") {
        node = this.resolve(node.discriminator.mapping[value[node.discriminator.propertyName]]);
      } else if (node.anyOf) {
        const options = node.anyOf.filter((option) => option.type !== "null");
        if (options.length !== 1) return node;
        node = options[0];
      } else return node;
    }
  }

  /** A request of type `tag` with `fields`: refused unless the schema has it, all as sent. */
  request(tag, fields) {
    const ref = this.client.members.get(tag);
    if (!ref) throw new SchemaError(`the schema has no request ${JSON.stringify(tag)}`);
    const component = this.resolve(ref);
    for (const key of Object.keys(fields)) {
      if (!(key in component.properties)) throw new SchemaError(`${tag} has no field ${key}`);
    }
    const message = { [this.client.tagField]: tag, ...fields };
    this.validate(message, { $ref: `#/$defs/${this.client.name}` }, tag);
    return message;
  }

  /** The union a received message (or event) belongs to. */
  unionOf(message) {
    return this.events.tagField in message && !(this.server.tagField in message) ? this.events : this.server;
  }

  /** Does the component of `message` declare `field`? */
  has(message, field) {
    const node = this.concrete({ $ref: `#/$defs/${this.unionOf(message).name}` }, message);
    return Boolean(node.properties?.[field]);
  }

  /** The value at `path` in `message` (a server message or an event), or the schema's
   * default for an omitted field: names are fields, numbers index arrays. */
  get(message, ...path) {
    let node = { $ref: `#/$defs/${this.unionOf(message).name}` };
    let value = message;
    for (const key of path) {
      node = this.concrete(node, value);
      if (typeof key === "number") {
        const item = node.prefixItems?.[key] ?? node.items;
        if (!item || !Array.isArray(value)) throw new SchemaError(`${node.title ?? "a value"} is no array`);
        node = item;
        value = value[key];
        continue;
      }
      const field = node.properties?.[key];
      if (!field) throw new SchemaError(`${node.title ?? "a value"} has no field ${key}`);
      value = value?.[key] === undefined ? field.default : value[key];
      node = field;
    }
    return value;
  }

  /** Is `message` of type `tag` (checked against the server union's names)? */
  is(message, tag) {
    if (!this.server.members.has(tag)) throw new SchemaError(`the schema has no server message ${tag}`);
    return message[this.server.tagField] === tag;
  }

  isEvent(event, kind) {
    if (!this.events.members.has(kind)) throw new SchemaError(`the schema has no room event ${kind}`);
    return event[this.events.tagField] === kind;
  }

  /** Throws unless `value` fits `node` (the keywords schema.json uses; any other is refused). */
  validate(value, node, path) {
    for (const keyword of Object.keys(node)) {
      if (!KEYWORDS.has(keyword)) throw new SchemaError(`${path}: keyword ${keyword} unsupported`);
    }
    const fail = (why) => {
      throw new SchemaError(`${path}: ${why} (${JSON.stringify(value)?.slice(0, 120)})`);
    };
    if (node.$ref) this.validate(value, this.resolve(node.$ref), path);
    if (node.anyOf) {
      if (node.discriminator && value && typeof value === "object" && !Array.isArray(value)) {
        const tag = value[node.discriminator.propertyName];
        const ref = node.discriminator.mapping[tag];
        if (!ref) fail(`${node.discriminator.propertyName} ${JSON.stringify(tag)} names no member`);
        this.validate(value, this.resolve(ref), `${path}<${tag}>`);
      } else if (!node.anyOf.some((option) => this.fits(value, option, path))) fail("fits no option");
    }
    if (node.enum && !node.enum.includes(value)) fail(`not one of ${node.enum}`);
    if (node.type && !isType(value, node.type)) fail(`not of type ${node.type}`);
    if (typeof value === "string") {
      const length = [...value].length;
      if (length < (node.minLength ?? 0) || length > (node.maxLength ?? length)) fail("length");
      if (node.pattern && !new RegExp(node.pattern, "u").test(value)) fail(`not ${node.pattern}`);
    }
    if (typeof value === "number") {
      if (node.minimum !== undefined && value < node.minimum) fail(`below ${node.minimum}`);
      if (node.maximum !== undefined && value > node.maximum) fail(`above ${node.maximum}`);
    }
    if (Array.isArray(value)) {
      if (value.length < (node.minItems ?? 0) || value.length > (node.maxItems ?? value.length)) fail("items");
      const prefix = node.prefixItems ?? [];
      value.forEach((item, index) => {
        const itemNode = index < prefix.length ? prefix[index] : node.items;
        if (itemNode) this.validate(item, itemNode, `${path}[${index}]`);
      });
    } else if (isType(value, "object")) {
      for (const key of node.required ?? []) if (!(key in value)) fail(`${key} missing`);
      for (const [key, item] of Object.entries(value)) {
        if (node.properties?.[key]) this.validate(item, node.properties[key], `${path}.${key}`);
        else if (node.additionalProperties === false) fail(`unknown field ${key}`);
      }
    }
  }

  fits(value, node, path) {
    try {
      this.validate(value, node, path);
      return true;
    } catch (error) {
      if (error instanceof SchemaError) return false;
      throw error;
    }
  }
}

function isType(value, type) {
  switch (type) {
    case "null": return value === null;
    case "boolean": return typeof value === "boolean";
    case "integer": return Number.isInteger(value) || typeof value === "bigint";
    case "number": return typeof value === "number" || typeof value === "bigint";
    case "string": return typeof value === "string";
    case "array": return Array.isArray(value);
    case "object": return value !== null && typeof value === "object" && !Array.isArray(value) && !(value instanceof Uint8Array);
    default: throw new SchemaError(`unknown type ${type}`);
  }
}

/** One connection: requests with ids, every received frame validated and kept until taken. */
class Connection {
  constructor(socket, schema) {
    this.socket = socket;
    this.schema = schema;
    this.nextId = 1;
    this.inbox = [];
    this.waiters = [];
    this.received = 0;
    this.closed = null;
    socket.binaryType = "arraybuffer";
    socket.addEventListener("message", (event) => this.receive(event.data));
    socket.addEventListener("close", (event) => {
      this.closed = `closed ${event.code} ${event.reason}`;
      for (const waiter of this.waiters) waiter.reject(new Error(this.closed));
      this.waiters = [];
    });
  }

  static open(url, schema) {
    const Socket = globalThis.WebSocket ?? WS;
    return new Promise((resolve, reject) => {
      const socket = new Socket(url);
      socket.addEventListener("open", () => resolve(new Connection(socket, schema)));
      socket.addEventListener("error", () => reject(new Error(`cannot connect to ${url}`)));
    });
  }

  receive(data) {
    try {
      if (typeof data === "string") throw new Error("the server sent a text frame");
      const message = decode(new Uint8Array(data), { useBigInt64: false });
      this.schema.validate(message, { $ref: `#/$defs/${this.schema.server.name}` }, "received");
      this.received += 1;
      const waiter = this.waiters.find((w) => w.predicate(message));
      if (waiter) {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        waiter.resolve(message);
      } else this.inbox.push(message);
      this.onMessage?.(message);
    } catch (error) {
      fail(error);
    }
  }

  /** The first message fitting `predicate`, taken from what came or what comes. */
  take(predicate, what) {
    const index = this.inbox.findIndex(predicate);
    if (index >= 0) return Promise.resolve(this.inbox.splice(index, 1)[0]);
    if (this.closed) return Promise.reject(new Error(this.closed));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
      this.waiters.push({
        predicate,
        resolve: (m) => { clearTimeout(timer); resolve(m); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
    });
  }

  /** Send request `tag` and return its answer; an `error` answer throws. */
  async request(tag, fields = {}) {
    const id = this.nextId++;
    const message = this.schema.request(tag, { id, ...fields });
    this.socket.send(encode(message));
    const answers = (m) => this.schema.has(m, "id") && this.schema.get(m, "id") === id;
    const reply = await this.take(answers, `answer to ${tag}`);
    if (this.schema.is(reply, "error")) {
      throw new Error(`${tag}: ${this.schema.get(reply, "code")}: ${this.schema.get(reply, "message")}`);
    }
    return reply;
  }
}

let WS;

function fail(error) {
  console.error(`schema bot: ${error?.stack ?? error}`);
  process.exit(1);
}

async function main() {
  const [url, schemaPath, movesText = "20"] = process.argv.slice(2);
  if (!url || !schemaPath) throw new Error("usage: node bot.mjs WS_URL SCHEMA_JSON [MOVES]");
  const maxMoves = Number.parseInt(movesText, 10);
  const schema = new Schema(JSON.parse(readFileSync(schemaPath, "utf8")));
  if (!globalThis.WebSocket) WS = (await import("ws")).WebSocket;
  const conn = await Connection.open(url, schema);

  const seen = { states: [], raceOver: false, finished: false, results: null };
  let mySeat = null;
  conn.onMessage = (message) => {
    if (!schema.is(message, "update")) return;
    for (const event of schema.get(message, "events")) {
      if (schema.isEvent(event, "state")) seen.states.push(schema.get(event, "state"));
      if (schema.isEvent(event, "finished") && schema.get(event, "seat") === mySeat) seen.finished = true;
      if (schema.isEvent(event, "race_over")) {
        seen.raceOver = true;
        seen.results = schema.get(event, "results").map((_, index) =>
          Object.fromEntries(
            ["place", "finished", "moves", "home", "bot"].map((field) => [
              field,
              schema.get(event, "results", index, field),
            ]),
          ),
        );
      }
    }
  };

  // `get` on a nested value needs its component: results are Result structs.
  const welcome = await conn.request("hello", {
    protocol: schema.document["x-protocol-version"],
    name: "Schema Bot",
    bot: true,
  });
  if (!schema.is(welcome, "welcome")) throw new Error("hello was not answered by welcome");
  const variants = schema.resolve(schema.client.members.get("create_room")).properties.variant.enum;
  const variant = variants.includes("antares") ? "antares" : variants[0];
  const joined = await conn.request("create_room", { variant, options: { max_racers: 1 } });
  const room = schema.get(joined, "room");
  mySeat = schema.get(joined, "seat");
  await conn.take((m) => schema.is(m, "snapshot") && schema.get(m, "room") === room, "snapshot");
  await conn.request("ready", { room });
  await waitUntil(() => seen.states.includes("racing"), "the race to start", conn);

  const played = [];
  while (played.length < maxMoves && !seen.finished && !seen.raceOver) {
    const moves = schema.get(await conn.request("legal_moves", { room }), "moves");
    if (moves.length === 0) break;
    const move = moves.find((text) => text.endsWith(">h")) ?? moves[0];
    const ack = await conn.request("move", { room, move });
    played.push(schema.get(ack, "move"));
  }
  if (!seen.finished && !seen.raceOver) await conn.request("resign", { room });
  await waitUntil(() => seen.raceOver, "the race to end", conn);

  console.log(JSON.stringify({
    protocol: schema.get(welcome, "protocol"),
    server_version: schema.get(welcome, "server_version"),
    variant,
    room,
    moves: played,
    won: seen.finished,
    race_over: seen.raceOver,
    results: seen.results,
    frames: conn.received,
  }));
  conn.socket.close(1000);
  process.exit(0);
}

function waitUntil(condition, what, conn) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const poll = () => {
      if (condition()) return resolve();
      if (conn.closed) return reject(new Error(`${conn.closed} before ${what}`));
      if (Date.now() - started > TIMEOUT_MS) return reject(new Error(`no sign of ${what}`));
      setTimeout(poll, 20);
    };
    poll();
  });
}

main().catch(fail);
