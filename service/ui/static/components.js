// Building blocks of the views: cards, stats, tables, badges, fact labels, the window selector.

import { lookupFact } from "./api.js";
import { WINDOWS } from "./contract.js";
import { $, append, factHref, fmtInt, h, replace } from "./dom.js";
import { DAYS_KEY, state } from "./state.js";

// Building blocks

export function card(title, opts = {}, ...children) {
  return h(
    "section",
    { class: `card ${opts.class || ""}`.trim(), testid: opts.testid, "aria-labelledby": opts.id },
    h("h2", { id: opts.id }, title),
    opts.help ? h("p", { class: "muted help" }, opts.help) : null,
    ...children,
  );
}

export function stat(label, value, testid, opts = {}) {
  return h(
    "div",
    { class: `stat ${opts.class || ""}`.trim(), title: opts.title },
    h("div", { class: "stat-value", testid, dataset: { value: String(value ?? "") } }, fmtInt(value)),
    h("div", { class: "stat-label" }, label),
    opts.note ? h("div", { class: "stat-note" }, opts.note) : null,
  );
}

// A column header: a label, or {label, num (right-aligned), wide (hidden on a phone)}.
export function headerCell(x) {
  const cls = [x.num && "num", x.wide && "wide-only"].filter(Boolean).join(" ");
  return h("th", { scope: "col", class: cls || null }, x.label || x);
}

export function table(headers, rows, opts = {}) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { testid: opts.testid, class: opts.class },
      opts.caption ? h("caption", { class: opts.captionHidden ? "visually-hidden" : "" }, opts.caption) : null,
      h("thead", {}, h("tr", {}, headers.map(headerCell))),
      h("tbody", {}, rows),
    ),
  );
}

export function empty(text, testid = "empty-state") {
  return h("p", { class: "empty", testid }, text);
}

export function meter(value, max, cls = "") {
  const width = max ? Math.max(2, Math.round((100 * value) / max)) : 0;
  return h("span", { class: `meter ${cls}`.trim(), "aria-hidden": "true" }, h("span", { style: `width:${width}%` }));
}

export function statusBadge(status, testid) {
  return h("span", { class: `badge status-${status}`, testid }, status);
}

// A link to a fact named by its uid: labelled by the uid until the fact's title arrives (lookupFact), the uid
// kept as the tooltip (and as small text with `showUid`); a retired or superseded fact gets its status badge.
// data-resolved on the link says how it ended: "title" or "uid" (the fact could not be fetched).
export function factLabel(uid, { title = "", testid = "fact-label", showUid = false } = {}) {
  const link = h("a", { href: factHref(uid), class: title ? null : "uid-text", title: uid, testid, dataset: { uid } }, title || uid);
  const label = h("span", { class: "fact-label" }, link);
  lookupFact(uid).then((fact) => fillFactLabel(label, link, fact, showUid));
  return label;
}

export function fillFactLabel(label, link, fact, showUid) {
  link.dataset.resolved = fact ? "title" : "uid";
  if (!fact) return;
  replace(link, fact.title);
  link.classList.remove("uid-text");
  if (showUid) append(label, " ", h("span", { class: "uid-hint" }, fact.uid));
  if (fact.status !== "active") append(label, " ", statusBadge(fact.status, "fact-label-status"));
}

export function tagList(tags) {
  if (!tags || !tags.length) return h("span", { class: "muted" }, "—");
  return h(
    "span",
    { class: "tags" },
    tags.map((t) => h("a", { class: "tag", href: `#/facts?tag=${encodeURIComponent(t)}` }, t)),
  );
}

export function windowSelector(onChange) {
  return h(
    "div",
    { class: "segmented", role: "group", "aria-label": "Window in days", testid: "window-select" },
    WINDOWS.map((d) =>
      h(
        "button",
        {
          type: "button",
          class: d === state.days ? "active" : "",
          "aria-pressed": d === state.days ? "true" : "false",
          testid: `window-${d}`,
          onclick: () => {
            if (d === state.days) return;
            state.days = d;
            sessionStorage.setItem(DAYS_KEY, String(d));
            onChange();
          },
        },
        `${d} days`,
      ),
    ),
  );
}
