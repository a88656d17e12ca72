// Views: the facts listing and one fact with its revisions and supersession chain.

import { ApiError, api, profilePath } from "./api.js";
import { card, empty, headerCell, statusBadge, table, tagList } from "./components.js";
import { FACT_PAGE, KINDS, STATUSES } from "./contract.js";
import { $, append, factHref, fmtTime, h, replace } from "./dom.js";
import { asOfField, asOfFrom, asOfNotice, asOfParam, redactionNotice } from "./review.js";
import { handleViewError } from "./session.js";
import { state } from "./state.js";

// View: fact browser

export function factFilters(params) {
  return {
    status: STATUSES.includes(params.get("status")) ? params.get("status") : "",
    kind: KINDS.includes(params.get("kind")) ? params.get("kind") : "",
    tag: (params.get("tag") || "").trim(),
    since: (params.get("since") || "").trim().slice(0, 64),
    until: (params.get("until") || "").trim().slice(0, 64),
    as_of: asOfFrom(params),
  };
}

// Status right after the title; the columns marked `wide` are hidden on a phone (the fact page has them).
export const FACT_COLUMNS = ["Title", "Status", { label: "Kind", wide: true }, "Tags", { label: "Created", wide: true }];

export function factRows(facts, asOf = "") {
  return facts.map((f) =>
    h(
      "tr",
      { testid: "fact-row", dataset: { uid: f.uid, status: f.status } },
      h("td", { class: "fact-title" },
        h("a", { href: factHref(f.uid) + (asOf ? `?as_of=${encodeURIComponent(asOf)}` : ""), testid: "fact-link" }, f.title)),
      h("td", {}, statusBadge(f.status)),
      h("td", { class: "wide-only" }, f.kind),
      h("td", {}, tagList(f.tags)),
      h("td", { class: "nowrap wide-only" }, fmtTime(f.created_at)),
    ),
  );
}

// A time-window end (GET /api/{profile}/facts since/until): when the fact was written or last changed.
function windowField(name, label, value) {
  return h("div", { class: "field" }, h("label", { for: `f-${name}` }, label),
    h("input", {
      id: `f-${name}`, name, value, testid: `filter-${name}`, placeholder: name === "since" ? "7d, 2026-11-01" : "any",
      maxlength: 64, autocapitalize: "off", spellcheck: "false",
      title: "A date (that whole UTC day), a date-time (UTC unless an offset is given) or a duration back from now: " +
        "30m, 24h, 7d, 2w",
    }));
}

export async function viewFacts(view, seq, params) {
  const filters = factFilters(params);
  const query = Object.fromEntries(Object.entries(filters).filter(([, v]) => v)); // as_of only when set
  const page = await api(profilePath("facts"), { ...query, limit: FACT_PAGE });
  if (seq !== state.renderSeq) return;

  const form = h(
    "form",
    {
      class: "filters",
      testid: "fact-filters",
      onsubmit: (e) => {
        e.preventDefault();
        const data = new FormData(e.target);
        const q = new URLSearchParams();
        for (const key of ["status", "kind", "tag", "since", "until"]) {
          const v = String(data.get(key) || "").trim();
          if (v) q.set(key, v);
        }
        const asOf = asOfParam(data.get("as_of"));
        if (asOf) q.set("as_of", asOf);
        const qs = q.toString();
        location.hash = `#/facts${qs ? `?${qs}` : ""}`;
      },
    },
    h("div", { class: "field" }, h("label", { for: "f-status" }, "Status"),
      h("select", { id: "f-status", name: "status", testid: "filter-status" },
        h("option", { value: "" }, "any"), STATUSES.map((s) => h("option", { value: s, selected: s === filters.status }, s)))),
    h("div", { class: "field" }, h("label", { for: "f-kind" }, "Kind"),
      h("select", { id: "f-kind", name: "kind", testid: "filter-kind" },
        h("option", { value: "" }, "any"), KINDS.map((k) => h("option", { value: k, selected: k === filters.kind }, k)))),
    h("div", { class: "field" }, h("label", { for: "f-tag" }, "Tag"),
      h("input", { id: "f-tag", name: "tag", value: filters.tag, testid: "filter-tag", placeholder: "any", autocapitalize: "off", spellcheck: "false" })),
    windowField("since", "Changed since", filters.since),
    windowField("until", "Changed until", filters.until),
    asOfField(h, filters.as_of),
    h("div", { class: "field" }, h("span", { class: "label-spacer", "aria-hidden": "true" }, " "),
      h("button", { type: "submit", class: "btn", testid: "filter-apply" }, "Apply")),
  );

  const tbody = h("tbody", {}, factRows(page.facts, filters.as_of));
  let cursor = page.next_cursor;
  let shown = page.facts.length;
  const count = h("span", { testid: "facts-count" }, String(shown));
  const more = h(
    "button",
    {
      type: "button",
      class: "btn btn-quiet",
      testid: "facts-more",
      hidden: !cursor,
      onclick: async () => {
        more.disabled = true;
        try {
          const next = await api(profilePath("facts"), { ...query, limit: FACT_PAGE, cursor });
          if (seq !== state.renderSeq) return;
          append(tbody, factRows(next.facts, filters.as_of));
          shown += next.facts.length;
          replace(count, String(shown));
          cursor = next.next_cursor;
          more.hidden = !cursor;
        } catch (exc) {
          handleViewError(exc, seq);
        } finally {
          more.disabled = false;
        }
      },
    },
    "More",
  );
  const list = page.facts.length
    ? h(
        "div",
        {},
        h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { testid: "facts-table" },
            h("caption", { class: "visually-hidden" }, "Facts"),
            h("thead", {}, h("tr", {}, FACT_COLUMNS.map(headerCell))),
            tbody,
          ),
        ),
        h("div", { class: "more-row" }, h("span", { class: "muted" }, count, " shown"), more),
      )
    : empty(
        filters.status || filters.kind || filters.tag || filters.since || filters.until
          ? "No facts match these filters." : "This profile has no facts yet.",
        "facts-empty",
      );

  replace(
    view,
    h("div", { class: "view-head" }, h("div", {}, h("h1", {}, "Facts"), h("p", { class: "muted" }, "Every fact of the profile, newest first. Nothing is ever deleted."))),
    filters.as_of ? asOfNotice(h, fmtTime, filters.as_of, "#/facts") : null,
    card("Filter", { id: "h-filter", class: "wide" }, form),
    card("Facts", { id: "h-facts", class: "wide" }, list),
  );
}

// View: one fact, its supersession chain and revisions

export async function viewFact(view, seq, uid, params) {
  const asOf = asOfFrom(params);
  let detail;
  try {
    detail = await api(profilePath(`facts/${encodeURIComponent(uid)}`), asOf ? { as_of: asOf } : {});
  } catch (exc) {
    if (seq === state.renderSeq && !(exc instanceof ApiError && exc.status === 401)) {
      replace(
        view,
        h("div", { class: "view-head" }, h("h1", {}, "Fact")),
        empty(`No fact to show for “${uid}”.`, "fact-missing"),
        h("p", {}, h("a", { href: "#/facts" }, "← Back to the facts")),
      );
    }
    throw exc;
  }
  if (seq !== state.renderSeq) return;
  const f = detail.fact;
  const chain = detail.chain || [];
  const byUid = Object.fromEntries(chain.map((c) => [c.uid, c]));
  const linkTo = (target, testid) => [
    h("a", { href: factHref(target), testid, dataset: { uid: target } }, byUid[target] ? byUid[target].title : target),
    byUid[target] ? h("span", { class: "uid-hint" }, ` ${target}`) : null,
  ];

  const notices = [asOf ? asOfNotice(h, fmtTime, asOf, factHref(uid)) : null, redactionNotice(h, fmtTime, detail.redaction)];
  if (f.status === "superseded" && f.superseded_by) {
    notices.push(
      h("div", { class: "notice", testid: "superseded-notice" }, "This fact was superseded. The current version is ",
        linkTo(f.superseded_by, "fact-successor"), "."),
    );
  }
  if (f.status === "retired") {
    notices.push(
      h("div", { class: "notice retired", testid: "retired-notice" },
        `This fact was retired on ${fmtTime(f.retired_at)}`, f.retire_reason ? `: ${f.retire_reason}` : ".",
      ),
    );
  }

  const meta = h(
    "dl",
    { class: "meta" },
    h("dt", {}, "uid"), h("dd", { class: "mono", testid: "fact-uid" }, f.uid),
    h("dt", {}, "Kind"), h("dd", {}, f.kind),
    h("dt", {}, "Status"), h("dd", { testid: "fact-status" }, statusBadge(f.status)),
    h("dt", {}, "Tags"), h("dd", {}, tagList(f.tags)),
    h("dt", {}, "Created"), h("dd", {}, fmtTime(f.created_at)),
    h("dt", {}, "Updated"), h("dd", {}, fmtTime(f.updated_at)),
    f.retired_at ? [h("dt", {}, "Retired"), h("dd", {}, fmtTime(f.retired_at))] : null,
    f.retire_reason ? [h("dt", {}, "Reason"), h("dd", {}, f.retire_reason)] : null,
    f.supersedes ? [h("dt", {}, "Replaces"), h("dd", {}, linkTo(f.supersedes, "fact-predecessor"))] : null,
    f.superseded_by && f.status !== "superseded"
      ? [h("dt", {}, "Replaced by"), h("dd", {}, linkTo(f.superseded_by, "fact-successor"))]
      : null,
    f.superseded_by && f.status === "superseded"
      ? [h("dt", {}, "Replaced by"), h("dd", {}, linkTo(f.superseded_by, "fact-successor-meta"))]
      : null,
  );

  const chainCard = card(
    "Supersession chain",
    { id: "h-chain", help: "Each text change made a new fact under a new uid; oldest first. The old versions stay on record." },
    chain.length > 1
      ? h(
          "ol",
          { class: "chain", testid: "fact-chain" },
          chain.map((c) =>
            h(
              "li",
              { class: c.uid === f.uid ? "current" : "", dataset: { uid: c.uid } },
              c.uid === f.uid
                ? h("span", { "aria-current": "true" }, h("strong", {}, c.title), " (this fact)")
                : h("a", { href: factHref(c.uid) }, c.title),
              " ",
              statusBadge(c.status),
              " ",
              h("span", { class: "muted small when" }, fmtTime(c.created_at)),
            ),
          ),
        )
      : empty("No other versions: this text was never amended.", "chain-empty"),
  );

  const revisions = detail.revisions || [];
  const revisionsCard = card(
    "Revisions",
    { id: "h-revisions", help: "Earlier title, kind and tags of this uid, kept when they were amended in place." },
    revisions.length
      ? table(
          [{ label: "#", num: true }, "Title", "Kind", "Tags", "Valid from", "Valid to"],
          revisions.map((r) =>
            h("tr", { testid: "revision-row" }, h("td", { class: "num" }, String(r.revision)), h("td", {}, r.title),
              h("td", {}, r.kind), h("td", {}, tagList(r.tags)), h("td", { class: "nowrap" }, fmtTime(r.valid_from)),
              h("td", { class: "nowrap" }, fmtTime(r.valid_to))),
          ),
          { testid: "revisions-table", caption: "Revisions", captionHidden: true },
        )
      : empty("No revisions: title, kind and tags were never changed in place.", "revisions-empty"),
  );

  replace(
    view,
    h("p", { class: "crumbs" }, h("a", { href: "#/facts" }, "← Facts")),
    h("div", { class: "view-head" }, h("div", {}, h("h1", { testid: "fact-title" }, f.title))),
    ...notices,
    h(
      "div",
      { class: "grid fit" },
      card("Fact", { id: "h-fact", class: "wide", testid: "fact-card" }, h("div", { class: "fact-text", testid: "fact-text" }, f.text), meta),
      chainCard,
      revisionsCard,
    ),
  );
}
