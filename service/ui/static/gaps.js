// "What memory did not know": the knowledge-gap report (GET /api/{profile}/queries/gaps) and one group's
// searches in the query log (#/queries?gap=<id>&days=<n>, from GET /api/{profile}/queries/gaps/{id}).

import { ApiError, api, profilePath } from "./api.js";
import { card, empty, statusBadge, table, windowSelector } from "./components.js";
import { factHref, fmtInt, fmtTime, h, replace } from "./dom.js";
import { route } from "./nav.js";
import { QUERY_COLUMNS, queryRow, showQueryDetail } from "./queries.js";
import { state } from "./state.js";

const BARS = 12; // groups drawn per section; the table lists them all
const QUERIES_SHOWN = 6; // distinct texts listed per group in the table (the group's page has every search)

const SECTIONS = [
  {
    key: "zero_match",
    title: "Searches that found nothing",
    help: "Zero-match searches no fact matched, not even a retired one, grouped into topics: what agents " +
      "expected memory to know. Each group links to its searches in the query log.",
    empty: "No zero-match searches in this window.",
  },
  {
    key: "retired_only",
    title: "Searches only retired facts would have answered",
    help: "Zero-match searches where a retired or superseded fact matched: memory once knew. " +
      "Worth a look before writing the fact again.",
    empty: "No search in this window matched only retired facts.",
  },
];

export function gapHref(group, days) {
  return `#/queries?gap=${encodeURIComponent(group.id)}&days=${encodeURIComponent(days)}`;
}

function groupingNote(grouping) {
  const text = grouping.method === "semantic"
    ? `Grouped by meaning: embeddings of ${grouping.model}, cosine ≥ ${grouping.threshold}` +
      ` (the ${grouping.embedded_forms_max} most searched word-groups per section; the rest by shared words).`
    : `Grouped by shared words (stemmed terms, Jaccard ≥ ${grouping.threshold})` +
      (grouping.reason ? `: ${grouping.reason}.` : ".");
  return h("p", { class: "muted gap-grouping", testid: "gap-grouping", dataset: { method: grouping.method } }, text);
}

function counts(items, name) {
  if (!items || !items.length) return h("span", { class: "muted" }, "—");
  return items.map((x) => `${x[name]} (${fmtInt(x.count)})`).join(", ");
}

function bars(section, days, label) {
  const shown = section.groups.slice(0, BARS);
  const max = Math.max(1, ...shown.map((g) => g.count));
  return h(
    "ol",
    {
      class: "gap-bars",
      role: "img",
      "aria-label": `${label}: the ${shown.length} largest of ${section.groups.length} groups by searches` +
        (shown.length ? `, largest "${shown[0].representative}" with ${shown[0].count}` : ""),
      testid: "gap-chart",
    },
    shown.map((g) =>
      h(
        "li",
        { dataset: { id: g.id, count: String(g.count) } },
        h("a", { href: gapHref(g, days), class: "gap-bar-label", tabindex: "-1", "aria-hidden": "true" }, g.representative),
        h("span", { class: "gap-bar", "aria-hidden": "true" },
          h("span", { style: `width:${Math.max(2, Math.round((100 * g.count) / max))}%` })),
        h("span", { class: "gap-bar-count", "aria-hidden": "true" }, fmtInt(g.count)),
      ),
    ),
  );
}

function retiredFacts(facts) {
  if (!facts || !facts.length) return h("span", { class: "muted" }, "—");
  return h(
    "ul",
    { class: "gap-facts" },
    facts.map((f) =>
      h("li", { testid: "gap-retired-fact" },
        h("a", { href: factHref(f.uid), title: f.uid }, f.title || f.uid), " ",
        f.status ? statusBadge(f.status, "gap-retired-status") : null,
        h("span", { class: "muted" }, ` ×${fmtInt(f.count)}`)),
    ),
  );
}

function groupRow(g, days, retired) {
  const more = g.queries.length - QUERIES_SHOWN;
  return h(
    "tr",
    { testid: "gap-group", dataset: { id: g.id, count: String(g.count) } },
    h("td", { class: "query-text" },
      h("a", { href: gapHref(g, days), testid: "gap-link" }, g.representative),
      h("ul", { class: "gap-queries" },
        g.queries.slice(0, QUERIES_SHOWN).map((q) => h("li", { testid: "gap-query" }, q.query, h("span", { class: "muted" }, ` ×${fmtInt(q.count)}`))),
        more > 0 ? h("li", { class: "muted" }, `and ${more} more`) : null)),
    h("td", { class: "num" }, fmtInt(g.count)),
    h("td", { class: "num wide-only" }, fmtInt(g.queries.length)),
    h("td", { class: "nowrap wide-only" }, `${fmtTime(g.first_seen)} – ${fmtTime(g.last_seen)}`),
    h("td", { class: "wide-only" }, counts(g.tags, "tag"), h("br"), counts(g.kinds, "kind")),
    retired ? h("td", {}, retiredFacts(g.retired_facts)) : null,
  );
}

function sectionCard(body, spec) {
  const section = body[spec.key];
  const retired = spec.key === "retired_only";
  const headers = ["Topic (searched texts)", { label: "Searches", num: true }, { label: "Texts", num: true, wide: true },
    { label: "First – last seen", wide: true }, { label: "Tags / kinds", wide: true }];
  if (retired) headers.push("Retired facts that matched");
  const stats = h(
    "p",
    { class: "gap-totals", testid: "gap-totals" },
    `${fmtInt(section.searches)} searches, ${fmtInt(section.distinct_queries)} distinct texts, ` +
      `${fmtInt(section.groups.length)} groups.`,
    section.capped
      ? h("strong", { testid: "gap-capped" }, ` Only the ${fmtInt(section.grouped_queries)} most searched texts ` +
          `(${fmtInt(section.grouped_searches)} searches) are grouped.`)
      : null,
  );
  return card(
    spec.title,
    { id: `h-gap-${spec.key}`, class: "wide", testid: `gaps-${spec.key}`, help: spec.help },
    stats,
    section.groups.length
      ? [
          bars(section, body.days, spec.title),
          h("details", { class: "alt", open: true },
            h("summary", {}, "Groups as a table"),
            table(headers, section.groups.map((g) => groupRow(g, body.days, retired)),
              { testid: `gap-table-${spec.key}`, caption: spec.title, captionHidden: true })),
        ]
      : empty(spec.empty, `gaps-empty-${spec.key}`),
  );
}

// The view at #/gaps.
export async function viewGaps(view, seq) {
  const days = state.days;
  const body = await api(profilePath("queries/gaps"), { days });
  if (seq !== state.renderSeq) return;
  replace(
    view,
    h(
      "div",
      { class: "view-head" },
      h("div", {}, h("h1", {}, "What memory did not know"),
        h("p", { class: "muted" }, `${body.from} – ${body.to} (UTC), ${days} days`)),
      windowSelector(() => route()),
    ),
    groupingNote(body.grouping),
    h("div", { class: "grid" }, SECTIONS.map((spec) => sectionCard(body, spec))),
  );
}

// The query log narrowed to one group's searches: #/queries?gap=<id>&days=<n>.
export async function viewGapSearches(view, seq, params) {
  const id = params.get("gap");
  const days = Number(params.get("days")) || state.days;
  let body;
  try {
    body = await api(profilePath(`queries/gaps/${encodeURIComponent(id)}`), { days, limit: 500 });
  } catch (exc) {
    if (seq === state.renderSeq && !(exc instanceof ApiError && exc.status === 401)) {
      // Nothing of the view shown before stays under this address; the banner says what went wrong.
      replace(view, h("div", { class: "view-head" }, h("h1", {}, "Query log")),
        empty("No searches to show for this gap: it is not in the report now.", "gap-missing"));
    }
    throw exc;
  }
  if (seq !== state.renderSeq) return;
  const detail = h("div", { class: "detail", testid: "query-detail-slot" });
  const rows = body.queries.map((q) => {
    const tr = queryRow(q, () => {
      for (const other of view.querySelectorAll("tr.selected")) other.classList.remove("selected");
      tr.classList.add("selected");
      showQueryDetail(detail, q.id, seq);
    });
    return tr;
  });
  const section = body.section === "retired_only" ? "only retired facts matched" : "nothing matched";
  replace(
    view,
    h("div", { class: "view-head" },
      h("div", {}, h("h1", {}, "Query log"),
        h("p", { class: "muted" }, `${body.from} – ${body.to} (UTC), ${body.days} days`))),
    h(
      "div",
      { class: "filter-banner", role: "status", testid: "gap-filter" },
      h("span", {}, "Showing the searches of the gap ", h("strong", { testid: "gap-filter-name" }, `“${body.group.representative}”`),
        ` (${section}): ${fmtInt(body.total)} searches, ${fmtInt(body.group.queries.length)} distinct texts` +
          (body.total > body.queries.length ? `, the ${body.queries.length} newest shown.` : ".")),
      " ",
      h("a", { href: "#/queries", testid: "gap-filter-clear" }, "Show all searches"),
      " · ",
      h("a", { href: "#/gaps" }, "Back to the gaps"),
    ),
    detail,
    card(
      `Searches of this gap (${body.queries.length})`,
      { id: "h-queries", class: "wide" },
      table(QUERY_COLUMNS, rows, { testid: "queries-table", caption: "Searches of this gap", captionHidden: true }),
    ),
  );
}
