// The fairness check of PROTOCOL.md: commitment = hex(sha256(UTF-8 of "<variant>|<deal>|<salt>")),
// computed in the browser with the Web Crypto API.

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
