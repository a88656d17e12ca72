// View: overview (query-log summary + store shape).

import { api, profilePath } from "./api.js";
import { COLORS, categoryChart, dailyChart } from "./charts.js";
import { card, empty, factLabel, meter, stat, table, windowSelector } from "./components.js";
import { KINDS } from "./contract.js";
import { fmtDay, fmtInt, h, pct, replace } from "./dom.js";
import { route } from "./nav.js";
import { state } from "./state.js";

// The summary names each top fact by uid and current title; its status (a top fact may since have been
// retired or superseded) comes from the fact itself, through factLabel.
export function topFactsCard(topFacts) {
  return topCard(
    "Top facts",
    { id: "h-topf", help: "Facts that were the best hit most often; marked when since retired or superseded." },
    topFacts,
    ["Fact", { label: "Best hit", num: true }],
    (f) =>
      h(
        "tr",
        { testid: "top-fact", dataset: { uid: f.uid } },
        h("td", {}, factLabel(f.uid, { title: f.title, testid: "top-fact-link" })),
        h("td", { class: "num" }, fmtInt(f.count)),
      ),
    "top-facts",
    "No search returned a fact in this window.",
  );
}

// A top list: its table (captioned with the card's title), or a line saying the window has none.
function topCard(title, options, items, columns, row, testid, none) {
  return card(
    title,
    options,
    items.length
      ? table(columns, items.map(row), { testid, caption: title, captionHidden: true })
      : empty(none, `${testid}-empty`),
  );
}

export async function viewOverview(view, seq) {
  const days = state.days;
  const [summary, stats] = await Promise.all([
    api(profilePath("queries/summary"), { days }),
    api(profilePath("stats"), { days }),
  ]);
  if (seq !== state.renderSeq) return;
  const storeEmpty = stats.facts + stats.retired + stats.superseded === 0;
  const daily = dailyCard(summary);
  const buckets = bucketsCard(summary.match_buckets, summary.totals);
  const store = storeCard(stats, storeEmpty);
  replace(
    view,
    overviewHeader(summary, days),
    ...notices(summary.totals, storeEmpty, days),
    h("div", { class: "grid" }, totalsCard(summary.totals), daily.card, buckets.card, topQueriesCard(summary.top_queries),
      h("div", { class: "stack" }, topFactsCard(summary.top_facts), topTagsCard(summary.top_tags)), store.card),
  );
  // The charts size themselves to their boxes, so they are drawn once the boxes are in the page.
  daily.draw();
  buckets.draw();
  store.draw();
}

function overviewHeader(summary, days) {
  return h(
    "div",
    { class: "view-head" },
    h("div", {}, h("h1", {}, "Overview"), h("p", { class: "muted" }, `${summary.from} – ${summary.to} (UTC), ${days} days`)),
    windowSelector(() => route()),
  );
}

function notices(t, storeEmpty, days) {
  if (storeEmpty && t.searches === 0) {
    return [
      empty(
        "This profile is empty: no facts have been written and no searches recorded yet. " +
          "Agents fill it through the MCP tools memory_write and memory_search.",
      ),
    ];
  }
  if (t.searches === 0) return [empty(`No searches were recorded in the last ${days} days.`, "empty-searches")];
  return [];
}

// Totals
function totalsCard(t) {
  const known = t.searches - (t.unknown_matched || 0); // searches whose matched count is known
  const totals = h(
    "div",
    { class: "stats-row", testid: "totals" },
    stat("searches", t.searches, "total-searches"),
    stat("zero-match searches", t.zero_match, "total-zero-match", {
      class: t.zero_match ? "miss" : "",
      note: known > 0 ? `${pct(t.zero_match, known)} of known` : null,
      title: "Searches that handed the agent nothing: what memory did not know.",
    }),
    stat("unknown match count", t.unknown_matched, "total-unknown", {
      title: "Searches whose matched count is not known exactly; not counted as misses.",
    }),
    stat("distinct queries", t.distinct_queries, "total-distinct"),
    t.retired_only !== undefined
      ? stat("misses where only a retired fact matched", t.retired_only, "total-retired-only", {
          title: "Zero-match searches where a retired or superseded fact would have matched.",
        })
      : null,
  );
  return card("Searches", { id: "h-totals", class: "wide" }, totals);
}

// Daily searches
function dailyCard(summary) {
  const dailyBox = h("div", {
    class: "chart",
    role: "img",
    "aria-label": `Searches and zero-match searches per day, ${summary.daily.length} days`,
    testid: "daily-chart",
    dataset: {
      points: String(summary.daily.length),
      from: summary.from,
      to: summary.to,
      searches: summary.daily.map((d) => d.searches).join(","),
      zeroMatch: summary.daily.map((d) => d.zero_match).join(","),
    },
  });
  const dailyTable = h(
    "details",
    { class: "alt" },
    h("summary", {}, "Show as a table"),
    table(
      ["Day", { label: "Searches", num: true }, { label: "Zero-match", num: true }],
      summary.daily
        .slice()
        .reverse()
        .map((d) =>
          h(
            "tr",
            { dataset: { date: d.date }, class: d.zero_match ? "miss" : "" },
            h("td", {}, d.date),
            h("td", { class: "num" }, fmtInt(d.searches)),
            h("td", { class: "num" }, fmtInt(d.zero_match)),
          ),
        ),
      { testid: "daily-table", caption: "Searches per day", captionHidden: true },
    ),
  );
  return {
    card: card(
      "Searches per day",
      {
        id: "h-daily",
        class: "wide",
        help: "Blue: all searches. Red: searches that found nothing (zero-match), drawn over the blue bar of the same day. " +
          "The legend gives the window's totals; point at a day for its own.",
      },
      dailyBox,
      dailyTable,
    ),
    draw: () =>
      dailyChart(dailyBox, summary.daily, [
        { key: "searches", label: "Searches", stroke: COLORS.searches, fill: COLORS.searchesFill },
        { key: "zero_match", label: "Zero-match", stroke: COLORS.miss, fill: COLORS.missFill },
      ], { overlay: true }),
  };
}

// Match buckets
function bucketsCard(buckets, t) {
  const bucketBox = h("div", {
    class: "chart",
    role: "img",
    "aria-label": "Searches by number of facts matched",
    testid: "buckets-chart",
  });
  const bucketCard = card(
    "How many facts each search matched",
    {
      id: "h-buckets",
      help: "Searches grouped by their matched count. The red bar, 0, is the misses.",
    },
    bucketBox,
    table(
      ["Matched", { label: "Searches", num: true }],
      [
        ...buckets.map((b) =>
          h(
            "tr",
            { class: b.label === "0" ? "miss" : "", dataset: { bucket: b.label } },
            h("td", {}, b.label === "0" ? "0 (nothing found)" : b.label),
            h("td", { class: "num" }, fmtInt(b.count)),
          ),
        ),
        h(
          "tr",
          { class: "unknown", testid: "bucket-unknown" },
          h("td", {}, "unknown"),
          h("td", { class: "num" }, fmtInt(t.unknown_matched)),
        ),
      ],
      { testid: "buckets-table", caption: "Searches by matched count", captionHidden: true },
    ),
    h(
      "div",
      { class: "explain", testid: "unknown-explained" },
      h("strong", {}, `Unknown: ${fmtInt(t.unknown_matched)}. `),
      "Searches whose matched count the search backend could not know exactly (for example a scaled-out " +
        "index reported only a lower bound, or the search ran degraded). They are kept apart: not misses, not in " +
        "any bucket. Buckets plus unknown equal all searches.",
    ),
    t.retired_only !== undefined
      ? h(
          "div",
          { class: "explain", testid: "retired-only-explained" },
          h("strong", {}, `Only retired facts matched: ${fmtInt(t.retired_only)}. `),
          "Zero-match searches where a retired or superseded fact would have matched: memory once knew the " +
            "answer but it was retired or replaced. Worth a look before writing the fact again.",
        )
      : null,
  );
  const labels = buckets.map((b) => b.label);
  return {
    card: bucketCard,
    draw: () =>
      categoryChart(bucketBox, labels, [
        { label: "Nothing found", stroke: COLORS.miss, fill: COLORS.missFill,
          values: buckets.map((b) => (b.label === "0" ? b.count : null)) },
        { label: "Searches", stroke: COLORS.searches, fill: COLORS.searchesFill,
          values: buckets.map((b) => (b.label === "0" ? null : b.count)) },
      ]),
  };
}

// Top queries, tags, facts (topFactsCard above)
function topQueriesCard(topQueries) {
  const maxQ = Math.max(1, ...topQueries.map((q) => q.count));
  return topCard(
    "Top queries",
    { id: "h-topq", help: "Most frequent search texts. Red rows had misses: the agent expected memory to know this." },
    topQueries,
    ["Query", { label: "Searches", num: true }, { label: "Zero-match", num: true }],
    (q) =>
      h(
        "tr",
        { class: q.zero_match ? "miss" : "", dataset: { zeroMatch: String(q.zero_match) } },
        h("td", { class: "query-text" }, q.query, meter(q.count, maxQ, q.zero_match ? "meter-miss" : "")),
        h("td", { class: "num" }, fmtInt(q.count)),
        h("td", { class: "num" }, q.zero_match ? h("span", { class: "badge miss" }, fmtInt(q.zero_match)) : "0"),
      ),
    "top-queries",
    "No searches in this window.",
  );
}

function topTagsCard(topTags) {
  const maxT = Math.max(1, ...topTags.map((x) => x.count));
  return topCard(
    "Top search tags",
    { id: "h-topt", help: "Tags agents filtered their searches by." },
    topTags,
    ["Tag", { label: "Searches", num: true }],
    (x) => h("tr", {}, h("td", {}, x.tag, meter(x.count, maxT)), h("td", { class: "num" }, fmtInt(x.count))),
    "top-tags",
    "No tagged searches in this window.",
  );
}

// Store shape
function storeCard(stats, storeEmpty) {
  const kindsBox = h("div", { class: "chart", role: "img", "aria-label": "Active facts by kind", testid: "kinds-chart" });
  const growthBox = h("div", {
    class: "chart",
    role: "img",
    "aria-label": `Facts created and retired per day, ${stats.daily.length} days`,
    testid: "growth-chart",
    dataset: { points: String(stats.daily.length) },
  });
  const storeStats = h(
    "div",
    { class: "stats-row", testid: "store-totals" },
    stat("active facts", stats.facts, "store-active"),
    stat("retired", stats.retired, "store-retired"),
    stat("superseded", stats.superseded, "store-superseded"),
    h(
      "div",
      { class: "stat span", testid: "store-span" },
      h("div", { class: "stat-value small" }, stats.oldest ? `${fmtDay(stats.oldest)} → ${fmtDay(stats.newest)}` : "—"),
      h("div", { class: "stat-label" }, "span: oldest → newest fact"),
    ),
  );
  const storeCard = card(
    "The store",
    { id: "h-store", class: "wide", help: "Counts over every fact of the profile; growth over the window." },
    storeStats,
    storeEmpty ? empty("No facts yet.", "store-empty") : null,
    h(
      "div",
      { class: "split" },
      h("div", {}, h("h3", {}, "Active facts by kind"), kindsBox,
        h("details", { class: "alt" }, h("summary", {}, "Show as a table"),
          table(["Kind", { label: "Active", num: true }],
            KINDS.map((k) => h("tr", {}, h("td", {}, k), h("td", { class: "num" }, fmtInt(stats.kinds[k] ?? 0)))),
            { testid: "kinds-table", caption: "Active facts by kind", captionHidden: true }))),
      h("div", {}, h("h3", {}, "Created and retired per day"), growthBox,
        h("details", { class: "alt" }, h("summary", {}, "Show as a table"),
          table(["Day", { label: "Created", num: true }, { label: "Retired", num: true }],
            stats.daily.slice().reverse().map((d) =>
              h("tr", { dataset: { date: d.date } }, h("td", {}, d.date),
                h("td", { class: "num" }, fmtInt(d.created)), h("td", { class: "num" }, fmtInt(d.retired)))),
            { testid: "growth-table", caption: "Facts created and retired per day", captionHidden: true }))),
    ),
    stats.top_tags && stats.top_tags.length
      ? h("div", {}, h("h3", {}, "Most used fact tags"),
          h("p", { class: "tags", testid: "store-tags" },
            stats.top_tags.map((x) => h("a", { class: "tag", href: `#/facts?tag=${encodeURIComponent(x.tag)}` },
              `${x.tag} `, h("span", { class: "tag-count" }, fmtInt(x.count))))))
      : null,
  );
  return {
    card: storeCard,
    draw: () => {
      categoryChart(kindsBox, KINDS, [
        { label: "Active facts", stroke: COLORS.searches, fill: COLORS.searchesFill, values: KINDS.map((k) => stats.kinds[k] ?? 0) },
      ], ["user", "pref", "proj", "ref", "res", "dec"]);
      dailyChart(growthBox, stats.daily, [
        { key: "created", label: "Created", stroke: COLORS.created, fill: COLORS.createdFill },
        { key: "retired", label: "Retired", stroke: COLORS.retired, fill: COLORS.retiredFill },
      ]);
    },
  };
}
