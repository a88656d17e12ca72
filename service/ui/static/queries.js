// View: the query log and one search's detail.

import { api, profilePath } from "./api.js";
import { card, empty, factLabel, statusBadge, table } from "./components.js";
import { QUERY_LIMITS } from "./contract.js";
import { $, factHref, fmtInt, fmtMs, fmtScore, fmtTime, h, replace } from "./dom.js";
import { route } from "./nav.js";
import { handleViewError, hideError } from "./session.js";
import { state } from "./state.js";

// View: recent query-log rows, with one row's details

export function matchedCell(row) {
  if (row.matched_count === null || row.matched_count === undefined) {
    return h("td", { class: "num" }, h("span", { class: "badge unknown", title: "matched count not known exactly" }, "unknown"));
  }
  return h("td", { class: "num" }, row.matched_count === 0 ? h("span", { class: "badge miss" }, "0") : fmtInt(row.matched_count));
}

// Columns: the important ones first; those marked `wide` are hidden on a phone (the row's details have them),
// where the time moves under the query.
export const QUERY_COLUMNS = [
  { label: "When", wide: true },
  "Query",
  { label: "Matched", num: true },
  { label: "Returned", num: true, wide: true },
  "Top hit",
  { label: "Tags", wide: true },
  { label: "Kind", wide: true },
  { label: "Latency", num: true, wide: true },
];

export function queryRow(q, open) {
  const muted = () => h("span", { class: "muted" }, "—");
  return h(
    "tr",
    {
      class: `clickable ${q.matched_count === 0 ? "miss" : ""}`.trim(),
      tabindex: "0",
      testid: "query-row",
      dataset: { id: String(q.id) },
      onclick: (e) => {
        if (!e.target.closest("a")) open();
      },
      onkeydown: (e) => {
        if (e.target === e.currentTarget && (e.key === "Enter" || e.key === " ")) {
          e.preventDefault();
          open();
        }
      },
    },
    h("td", { class: "nowrap wide-only" }, fmtTime(q.created_at)),
    h("td", { class: "query-text" }, q.query, h("span", { class: "phone-only when" }, fmtTime(q.created_at))),
    matchedCell(q),
    h("td", { class: "num wide-only" }, fmtInt(q.returned_count)),
    h("td", { class: "top-hit", testid: "top-hit" }, q.top_uid ? factLabel(q.top_uid, { testid: "top-hit-link" }) : muted()),
    h("td", { class: "wide-only" }, q.tags && q.tags.length ? q.tags.join(", ") : muted()),
    h("td", { class: "wide-only" }, q.kind || muted()),
    h("td", { class: "num wide-only" }, fmtMs(q.latency_ms)),
  );
}

export async function viewQueries(view, seq, selectedId) {
  const listing = await api(profilePath("queries"), { limit: state.queriesLimit });
  if (seq !== state.renderSeq) return;
  const detail = h("div", { class: "detail", testid: "query-detail-slot" });
  const select = h(
    "select",
    {
      id: "queries-limit",
      testid: "queries-limit",
      onchange: (e) => {
        state.queriesLimit = Number(e.target.value);
        route();
      },
    },
    QUERY_LIMITS.map((n) => h("option", { value: n, selected: n === state.queriesLimit }, String(n))),
  );
  const rows = listing.queries.map((q) => {
    const tr = queryRow(q, () => {
      for (const other of view.querySelectorAll("tr.selected")) other.classList.remove("selected");
      tr.classList.add("selected");
      history.replaceState(null, "", `#/queries/${q.id}`);
      showQueryDetail(detail, q.id, seq);
    });
    if (selectedId && String(q.id) === String(selectedId)) tr.classList.add("selected");
    return tr;
  });
  replace(
    view,
    h(
      "div",
      { class: "view-head" },
      h("div", {}, h("h1", {}, "Query log"), h("p", { class: "muted" }, `Newest first; the listing keeps the ${QUERY_LIMITS.at(-1)} newest rows. Click a row for what it returned.`)),
      h("div", { class: "field-inline" }, h("label", { for: "queries-limit" }, "Rows"), select),
    ),
    detail,
    card(
      `Recent searches (${listing.queries.length})`,
      { id: "h-queries", class: "wide" },
      listing.queries.length
        ? table(QUERY_COLUMNS, rows, { testid: "queries-table", caption: "Recent searches", captionHidden: true })
        : empty("No searches recorded yet. Each memory_search call adds a row here."),
    ),
  );
  if (selectedId) showQueryDetail(detail, selectedId, seq);
}

export async function showQueryDetail(slot, id, seq) {
  hideError();
  let row;
  try {
    row = (await api(profilePath(`queries/${encodeURIComponent(id)}`))).query;
  } catch (exc) {
    handleViewError(exc, seq);
    return;
  }
  if (seq !== state.renderSeq) return;
  replace(slot, queryDetailCard(row));
  slot.scrollIntoView({ block: "nearest" });
}

export function queryDetailCard(row) {
  const results = row.results || [];
  return card(
    `Search #${row.id}`,
    { id: "h-detail", class: "wide", testid: "query-detail" },
    h("p", { class: "query-big" }, row.query),
    h(
      "dl",
      { class: "meta" },
      h("dt", {}, "When"), h("dd", {}, fmtTime(row.created_at)),
      h("dt", {}, "Matched"), h("dd", {}, row.matched_count === null ? "unknown (not known exactly)" : fmtInt(row.matched_count)),
      h("dt", {}, "Returned"), h("dd", {}, `${fmtInt(row.returned_count)} (limit ${row.limit ?? "—"})`),
      h("dt", {}, "Filters"), h("dd", {}, `kind: ${row.kind || "any"}; tags: ${row.tags && row.tags.length ? row.tags.join(", ") : "none"}`),
      h("dt", {}, "Changed"), h("dd", { testid: "query-window" }, row.since || row.until
        ? `${row.since ? `since ${fmtTime(row.since)}` : ""}${row.since && row.until ? ", " : ""}${row.until ? `until ${fmtTime(row.until)}` : ""}`
        : "any time"),
      h("dt", {}, "Mode"), h("dd", {}, row.mode || "—"),
      row.inactive_matched !== undefined && row.inactive_matched !== null
        ? [h("dt", {}, "Retired/superseded matched"), h("dd", {}, fmtInt(row.inactive_matched))]
        : null,
      h("dt", {}, "Latency"), h("dd", {}, fmtMs(row.latency_ms)),
    ),
    results.length
      ? table(
          [{ label: "#", num: true }, "Fact", { label: "Score", num: true }, { label: "Lexical", num: true }, { label: "Vector", num: true }],
          results.map(resultRow),
          { testid: "query-results", caption: "Facts returned", captionHidden: true },
        )
      : empty("This search handed back nothing.", "query-results-empty"),
    onceKnown(row.inactive_matches || []),
  );
}

// The retired or superseded facts a search also matched: for a miss, what memory once knew.
export function onceKnown(matches) {
  if (!matches.length) return null;
  return h(
    "div",
    { class: "once-known", testid: "inactive-matches" },
    h("p", {}, h("strong", {}, "Retired or superseded facts it also matched"), " (not handed back):"),
    h(
      "ul",
      {},
      matches.map((m) => h("li", { testid: "inactive-match" }, h("a", { href: factHref(m.uid), title: m.uid }, m.title), " ",
        statusBadge(m.status, "inactive-match-status"))),
    ),
  );
}

export function resultRow(r, i) {
  return h(
    "tr",
    { testid: "query-result", dataset: { uid: r.uid } },
    h("td", { class: "num" }, String(i + 1)),
    h("td", { class: "result-fact" }, factLabel(r.uid, { testid: "result-link", showUid: true })),
    h("td", { class: "num" }, fmtScore(r.score)),
    h("td", { class: "num" }, fmtScore(r.lexical)),
    h("td", { class: "num" }, fmtScore(r.vector)),
  );
}
