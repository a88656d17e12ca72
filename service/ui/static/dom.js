// Small DOM helpers and formatting (text only: user content is never parsed as HTML).
// Children go into the page only through h, append and replace: they skip the "nothing" a conditional child
// leaves (null, undefined, true/false from `cond && el`), which the DOM's own append would print as text.
// An element given text with a word of LONG_WORD characters or more (a hash, uid, URL, long tag, or a title or
// query without spaces) gets the class "long-words" (overflow-wrap: anywhere in app.css): that word breaks
// where it must, so it never widens a table or the page, while ordinary words stay whole.
// The formatters turn a missing or non-numeric value into "—", never into "null", "NaN" or "Invalid Date".

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "testid") el.dataset.testid = value;
    else if (key === "dataset") {
      for (const [name, v] of Object.entries(value)) if (v !== null && v !== undefined) el.dataset[name] = v;
    }
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  return append(el, children);
}

// Whether a child is "nothing": skipped rather than printed as "null", "undefined", "true" or "false".
const nothing = (child) => child === null || child === undefined || typeof child === "boolean";

export const LONG_WORD = 20;
const longWord = new RegExp(`\\S{${LONG_WORD},}`);

// Appends children (nodes, strings, numbers, nested arrays) to el, skipping nothing-children.
export function append(el, ...children) {
  for (const child of children.flat(Infinity)) {
    if (nothing(child)) continue;
    if (child instanceof Node) {
      el.append(child);
    } else {
      const text = String(child);
      if (longWord.test(text)) el.classList.add("long-words");
      el.append(document.createTextNode(text));
    }
  }
  return el;
}

// Replaces el's children (as append; no children empties el). Views draw themselves with this.
export function replace(el, ...children) {
  el.replaceChildren();
  el.classList.remove("long-words");
  return append(el, ...children);
}

export const $ = (sel, root = document) => root.querySelector(sel);

// A finite number, or null for anything else (null, undefined, "", NaN, a non-numeric string).
export function num(v) {
  if (v === null || v === undefined || v === "" || typeof v === "boolean") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

export function fmtInt(v) {
  const n = num(v);
  return n === null ? "—" : n.toLocaleString("en-US");
}

export function fmtTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.toISOString().slice(0, 16).replace("T", " ")}\u00a0UTC`; // no break before UTC
}

export function fmtDay(iso) {
  return iso ? String(iso).slice(0, 10) : "—";
}

export function fmtMs(v) {
  const n = num(v);
  if (n === null) return "—";
  return n < 10 ? `${n.toFixed(1)} ms` : `${Math.round(n)} ms`;
}

export function fmtScore(v) {
  const n = num(v);
  return n === null ? "—" : n.toFixed(4);
}

// A share as a percentage; "—" when the whole is not a positive number (nothing to take a share of).
export function pct(part, whole) {
  const p = num(part);
  const w = num(whole);
  return p === null || w === null || w <= 0 ? "—" : `${Math.round((100 * p) / w)}%`;
}

export function factHref(uid) {
  return `#/facts/${encodeURIComponent(uid)}`;
}
