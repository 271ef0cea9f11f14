// Small DOM helpers: build elements without HTML strings (no inline script or style anywhere).

/**
 * `h("button", {className: "primary", onclick: f, dataset: {x: "1"}}, "text", child)`:
 * an element with properties, data attributes, listeners (`on*`) and children.
 */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "className" || key === "textContent" || key === "value" || key === "checked") node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** `m:ss.cc` for a duration in ms, hundredths like the terminal client (hours add to the minutes). */
export function formatMs(ms) {
  if (ms === null || ms === undefined) return "—";
  const hundredths = Math.floor(Math.max(0, ms) / 10);
  const seconds = Math.floor(hundredths / 100) % 60;
  const minutes = Math.floor(hundredths / 6000);
  return `${minutes}:${String(seconds).padStart(2, "0")}.${String(hundredths % 100).padStart(2, "0")}`;
}

/** `1 day`, `2 days`. */
export function count(number, noun) {
  return `${number} ${noun}${number === 1 ? "" : "s"}`;
}

/** A room code, never broken across lines. */
export function roomCode(code) {
  return h("span", { className: "room-code" }, code);
}

export function variantName(variant) {
  return variant === "antares" ? "Antares" : "Scorpion";
}

/** A status line: `show(text, isError)`. */
export function statusLine() {
  const node = h("div", { className: "status", role: "status", "aria-live": "polite" });
  node.show = (text, error = false) => {
    node.textContent = text || "";
    node.classList.toggle("error", Boolean(error));
  };
  return node;
}

/** Replace `node`'s children, skipping null, undefined and false (DOM methods would print them). */
export function fill(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}
