// Small DOM helpers and formatting (text only: user content is never parsed as HTML).

// Small DOM helpers (text only: user content is never parsed as HTML)

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "testid") el.dataset.testid = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);

export function fmtInt(n) {
  return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US");
}

export function fmtTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

export function fmtDay(iso) {
  return iso ? String(iso).slice(0, 10) : "—";
}

export function fmtMs(v) {
  if (v === null || v === undefined) return "—";
  return v < 10 ? `${Number(v).toFixed(1)} ms` : `${Math.round(v)} ms`;
}

export function fmtScore(v) {
  return v === null || v === undefined ? "—" : Number(v).toFixed(4);
}

export function pct(part, whole) {
  return whole ? `${Math.round((100 * part) / whole)}%` : "0%";
}

export function factHref(uid) {
  return `#/facts/${encodeURIComponent(uid)}`;
}
