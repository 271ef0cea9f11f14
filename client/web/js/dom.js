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

/** `m:ss.t` for a duration in ms (hours when needed). */
export function formatMs(ms) {
  if (ms === null || ms === undefined) return "—";
  const total = Math.max(0, Math.floor(ms / 100));
  const tenths = total % 10;
  const seconds = Math.floor(total / 10) % 60;
  const minutes = Math.floor(total / 600) % 60;
  const hours = Math.floor(total / 36000);
  const mm = hours ? String(minutes).padStart(2, "0") : String(minutes);
  return `${hours ? `${hours}:` : ""}${mm}:${String(seconds).padStart(2, "0")}.${tenths}`;
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
