// The web client's entry point: one connection for the page, a screen per route, and the
// notices of what the server pushes (notices.js).
//   /r/CODE          race in room CODE (join with a name; a reload resumes the seat)
//   #/lobby          race a bot, quick race, your best run's ghost, live public rooms (the default)
//   #/play           every way to race on one page, each opening its own (hub.js)
//   #/quick/GAME     waiting in the quick-match line of GAME
//   #/watch/CODE     watch a room
//   #/daily[/GAME]   the daily challenge and the leaderboards
//   #/replay/CODE[/SEAT]  a finished race, step by step, and racing its run as a ghost
//   #/account        register, log in, log out, change the password
//   #/challenges[/take/ID | /rival/PLAYER[/NAME] | /new | /async | /inbox]  your challenges, and starting one
//   #/arenas         the arena tournaments; #/arena/ID: one, to join, with its live standings
//   #/brackets       the bracket tournaments; #/bracket/ID: one, to register and play your rounds

import { ArenaScreen, ArenasScreen } from "./arenas.js";
import { BracketScreen, BracketsScreen } from "./brackets.js";
import { resumeBot } from "./bot.js";
import { ChallengesScreen, showWaiting } from "./challenges.js";
import { Connection, serverUrl } from "./connection.js";
import { DailyScreen } from "./daily.js";
import { fill, h } from "./dom.js";
import { PlayScreen } from "./hub.js";
import { LobbyScreen } from "./lobby.js";
import { Notices } from "./notices.js";
import { QuickScreen } from "./quick.js";
import { ReplayScreen } from "./replay.js";
import { RoomScreen } from "./room.js";

const conn = new Connection(serverUrl());
// For the console and the tests: the page's connection (it holds nothing the page does not show).
window.solitaireRace = { conn };
const main = document.getElementById("view");
const who = document.getElementById("who");
// What the server pushes unasked (a challenge's result, a bracket round closed), on every page.
const notices = new Notices();
main.before(notices.node);
notices.follow(conn);
let screen = null;

function screenFor() {
  const room = location.pathname.match(/^\/r\/([A-Za-z0-9]{1,16})\/?$/);
  if (room) return new RoomScreen(conn, room[1], "race");
  const [, page, arg, extra, more] = (location.hash || "#/lobby").split("/");
  switch (page) {
    case "play":
      return new PlayScreen(conn);
    case "challenges":
      return new ChallengesScreen(conn, arg, extra, more);
    case "arenas":
      return new ArenasScreen(conn);
    case "brackets":
      return new BracketsScreen(conn);
    case "bracket":
      return arg ? new BracketScreen(conn, arg) : new BracketsScreen(conn);
    case "arena":
      return arg ? new ArenaScreen(conn, arg) : new ArenasScreen(conn);
    case "watch":
      return arg ? new RoomScreen(conn, arg, "watch") : new LobbyScreen(conn);
    case "daily":
      return new DailyScreen(conn, arg);
    case "quick":
      return new QuickScreen(conn, arg);
    case "account":
      // Loaded when first opened, so the other pages do not carry it.
      return lazyScreen(() => import("./account.js").then((module) => new module.AccountScreen(conn)));
    case "replay":
      return arg ? new ReplayScreen(conn, arg, extra) : new LobbyScreen(conn);
    default:
      return new LobbyScreen(conn);
  }
}

/** A screen whose module is imported on mount (and not mounted if left before it arrives). */
function lazyScreen(load) {
  let real = null;
  let left = false;
  return {
    mount(main) {
      load().then((loaded) => {
        if (left) return;
        real = loaded;
        real.mount(main);
      });
    },
    unmount() {
      left = true;
      if (real) real.unmount();
    },
  };
}

function route() {
  if (screen) screen.unmount();
  screen = screenFor();
  screen.mount(main);
}

/** The header says who the page plays as: an account's name, or a guest's (who may rename). */
function showWho() {
  if (conn.state !== "connected") {
    fill(who, "connecting…");
    return;
  }
  fill(
    who,
    h("span", { id: "who-name", dataset: { account: String(conn.account) } }, conn.account ? conn.name : `Guest: ${conn.name}`),
    " ",
    conn.account ? null : [h("button", { id: "rename", className: "small", onclick: rename }, "Change name"), " "],
    h("a", { href: "#/account", id: "account-link" }, conn.account ? "Account" : "Log in / register"),
  );
}

async function rename() {
  const name = prompt("Your name (1 to 24 characters)", conn.name || "");
  if (name && name.trim()) await conn.rename(name.trim());
}

conn.on((kind) => {
  if (kind === "connected" || kind === "disconnected" || kind === "account") showWho();
  // Challenges may have come while the player was away (or another player's, once signed in).
  const pushed = kind === "challenge_result" || kind === "challenge_waiting";
  if (kind === "connected" || kind === "account" || pushed) showWaiting(conn);
});
conn.start().catch((error) => {
  main.prepend(h("p", { className: "status error" }, `Cannot reach the server: ${error.message}`));
});
showWho();
// A bot this tab called into the room on screen comes back with the page (bot.js).
const shownRoom = location.pathname.match(/^\/r\/([A-Za-z0-9]{1,16})\/?$/);
if (shownRoom) resumeBot(shownRoom[1].toUpperCase());
window.addEventListener("hashchange", () => {
  if (!location.pathname.startsWith("/r/")) route();
  else location.assign(`/${location.hash}`);
});
route();
