// The fairness check of PROTOCOL.md: commitment = hex(sha256(UTF-8 of "<variant>|<deal>|<salt>")),
// computed in the browser with the Web Crypto API, and its verdict as every page shows it (a
// race's results, a challenge's line in the inbox, a bracket's closed round).

import { fill, h } from "./dom.js";

export async function sha256Hex(text) {
  if (!globalThis.crypto || !crypto.subtle) {
    throw new Error("this browser offers SHA-256 only on secure pages (https or localhost)");
  }
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** {ok, digest} for a revealed deal and salt against the published commitment. */
export async function checkCommitment(variant, deal, salt, commitment) {
  const digest = await sha256Hex(`${variant}|${deal}|${salt}`);
  return { ok: digest === commitment, digest };
}

/** Verdicts already reached, by what was checked: a page drawn again shows its verdict at once. */
const verdicts = new Map();

/**
 * Fill `node` (a `.fairness` paragraph) with the verdict on `reveal` ({deal, salt}) against
 * `commitment`, published `when` (words: "before the race"); `data-ok` and the class `ok` or
 * `bad` say it for the eye and the tests.
 */
export async function showVerdict(node, variant, reveal, commitment, when = "before the race") {
  const key = [variant, reveal.deal, reveal.salt, commitment].join("|");
  try {
    let verdict = verdicts.get(key);
    if (!verdict) {
      verdict = await checkCommitment(variant, reveal.deal, reveal.salt, commitment);
      verdicts.set(key, verdict);
    }
    const { ok, digest } = verdict;
    node.classList.add(ok ? "ok" : "bad");
    fill(
      node,
      ok ? "✓ Fair deal: " : "✗ The revealed deal does not match the commitment: ",
      h("span", {}, `sha256("${variant}|${reveal.deal}|${reveal.salt}") = `),
      h("code", {}, digest),
      ok ? ` equals the commitment published ${when}.` : ` but the commitment was ${commitment}.`,
    );
    node.dataset.ok = String(ok);
  } catch (error) {
    node.textContent = `Cannot check the commitment here: ${error.message}`;
  }
}

/**
 * The revealed deal of a challenge or a bracket round, checked: a `.fairness` paragraph with the
 * verdict (`when`: when the commitment was published), or only the deal when no commitment came
 * (an older server).
 */
export function revealedDeal(variant, reveal, commitment, when) {
  if (!commitment) return h("p", { className: "muted" }, `Deal ${reveal.deal} (revealed).`);
  const node = h("p", { className: "fairness" }, "Checking the deal against its commitment…");
  showVerdict(node, variant, reveal, commitment, when);
  return node;
}
