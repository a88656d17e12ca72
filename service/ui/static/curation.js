// View: curation (#/curation) — what to tidy in memory (issue 39), from the REST API only:
// - near-duplicates: GET /api/{profile}/duplicates, each group with its suggested keep and the CLI line that
//   resolves it (`memory duplicates resolve …`), with a copy button;
// - never recalled: GET /api/{profile}/facts?recalled=never&status=active, which lists newest first. The view
//   shows them oldest first (the stalest first), so it reads the listing to its end, NEVER_READ facts per pass
//   (pages of the contract's facts_page_max), and reverses what it read. When more than NEVER_READ are left
//   it says so — older facts are still unread, so what it shows is not yet the oldest of all — and offers to
//   read the next NEVER_READ from the cursor where it stopped;
// - most recalled: GET /api/{profile}/facts?order=recalled&status=active&limit=TOP_RECALLED.

import { api, profilePath } from "./api.js";
import { card, empty, table } from "./components.js";
import { FACTS_PAGE_MAX } from "./contract.js";
import { factHref, fmtInt, fmtTime, h, num, replace } from "./dom.js";
import { handleViewError } from "./session.js";
import { state } from "./state.js";

export const NEVER_READ = 1000; // never-recalled facts read per pass
export const NEVER_SHOWN = 50; // never-recalled rows drawn at first, and per "Show more"
export const TOP_RECALLED = 20;

// "1 fact", "3 facts": a count with its noun.
function counted(n, one, many = `${one}s`) {
  return `${fmtInt(n)} ${num(n) === 1 ? one : many}`;
}

function cosine(v) {
  const n = num(v);
  return n === null ? "—" : n.toFixed(2);
}

function factLink(f, testid = "curation-fact-link") {
  return h("a", { href: factHref(f.uid), testid, dataset: { uid: f.uid } }, f.title || f.uid);
}

// --- never recalled -------------------------------------------------------------------------------------

// What was read of the never-recalled listing: its facts newest first (as listed), and where to go on.
function neverStore() {
  return { facts: [], cursor: null, done: false, shown: NEVER_SHOWN };
}

// Reads up to NEVER_READ more facts of the listing (from the cursor where the last pass stopped).
async function readNever(store) {
  let read = 0;
  do {
    const page = await api(profilePath("facts"), {
      recalled: "never", status: "active", limit: FACTS_PAGE_MAX, cursor: store.cursor,
    });
    store.facts.push(...page.facts);
    read += page.facts.length;
    store.cursor = page.next_cursor;
  } while (store.cursor && read < NEVER_READ);
  store.done = !store.cursor;
  return store;
}

function neverRow(f) {
  return h(
    "tr",
    { testid: "never-row", dataset: { uid: f.uid } },
    h("td", { class: "fact-title" }, factLink(f), h("div", { class: "uid-hint" }, f.uid)),
    h("td", { class: "wide-only" }, f.kind),
    h("td", { class: "nowrap" }, fmtTime(f.created_at)),
  );
}

// The card's text on how much was read: exact when the listing was read to its end.
function neverSummary(store) {
  const n = store.facts.length;
  if (store.done) {
    return h("p", { class: "curation-total", testid: "never-total" },
      `${counted(n, "active fact")} ${n === 1 ? "was" : "were"} never returned by a search, oldest first.`);
  }
  return h(
    "p",
    { class: "notice curation-partial", testid: "never-partial", role: "status" },
    h("strong", {}, `At least ${fmtInt(n + 1)} active facts were never returned by a search. `),
    `The newest ${fmtInt(n)} are read and shown oldest first; older ones are not read yet, so the oldest ` +
      "of all are not among them.",
  );
}

function drawNever(box, store, seq) {
  const oldestFirst = [...store.facts].reverse();
  const shown = oldestFirst.slice(0, store.shown);
  const showMore = h(
    "button",
    {
      type: "button",
      class: "btn btn-quiet",
      testid: "never-show-more",
      hidden: shown.length >= oldestFirst.length,
      onclick: () => {
        store.shown += NEVER_SHOWN;
        drawNever(box, store, seq);
      },
    },
    `Show ${fmtInt(Math.min(NEVER_SHOWN, oldestFirst.length - shown.length))} more`,
  );
  const readOn = h(
    "button",
    {
      type: "button",
      class: "btn",
      testid: "never-read-on",
      hidden: store.done,
      onclick: async (event) => {
        event.currentTarget.disabled = true;
        try {
          await readNever(store);
          if (seq === state.renderSeq) drawNever(box, store, seq);
        } catch (exc) {
          handleViewError(exc, seq);
          if (seq === state.renderSeq) drawNever(box, store, seq);
        }
      },
    },
    `Read the next ${fmtInt(NEVER_READ)}`,
  );
  box.dataset.read = String(store.facts.length);
  box.dataset.complete = String(store.done);
  replace(
    box,
    neverSummary(store),
    table(
      ["Fact", { label: "Kind", wide: true }, "Created"],
      shown.map(neverRow),
      { testid: "never-table", caption: "Facts never returned by a search, oldest first", captionHidden: true },
    ),
    h(
      "div",
      { class: "more-row" },
      h("span", { class: "muted", testid: "never-shown" }, `${fmtInt(shown.length)} of ${fmtInt(oldestFirst.length)} shown`),
      h("span", { class: "curation-buttons" }, showMore, readOn),
    ),
  );
}

function neverCard(store, active, seq) {
  const spec = {
    id: "h-never",
    class: "wide",
    testid: "curation-never",
    help: "Active facts that no logged search has returned, oldest first: written, but never found. Retire what is " +
      "stale; give what still matters a title and tags that searches find. A fact written after the last search " +
      "is here too.",
  };
  if (!store.facts.length) {
    return card("Never recalled", spec, empty(active ? "Every active fact has been returned by a search."
      : "This profile has no active facts yet.", "never-empty"));
  }
  const box = h("div", { testid: "never-list" });
  drawNever(box, store, seq);
  return card("Never recalled", spec, box);
}

// --- most recalled --------------------------------------------------------------------------------------

function topRow(f, i) {
  return h(
    "tr",
    { testid: "top-recalled-row", dataset: { uid: f.uid, count: String(f.recalled_count) } },
    h("td", { class: "num wide-only" }, String(i + 1)),
    h("td", { class: "fact-title" }, factLink(f), h("div", { class: "uid-hint" }, f.uid)),
    h("td", { class: "num", testid: "top-recalled-count" }, fmtInt(f.recalled_count)),
    h("td", { class: "nowrap" }, fmtTime(f.last_recalled_at)),
    h("td", { class: "wide-only" }, f.kind),
  );
}

function topCard(facts, active) {
  const recalled = facts.filter((f) => (num(f.recalled_count) || 0) > 0);
  return card(
    "Most recalled",
    {
      id: "h-top-recalled",
      class: "wide",
      testid: "curation-top",
      help: `The active facts logged searches returned most often (up to ${TOP_RECALLED}, ties newest first), ` +
        "with when a search last returned each: what memory is mostly used for.",
    },
    recalled.length
      ? table(
          [{ label: "#", num: true, wide: true }, "Fact", { label: "Recalled", num: true }, "Last recalled",
            { label: "Kind", wide: true }],
          recalled.map(topRow),
          { testid: "top-recalled-table", caption: "Most recalled facts", captionHidden: true },
        )
      : empty(active ? "No search has returned an active fact yet." : "This profile has no active facts yet.",
        "top-recalled-empty"),
  );
}

// --- near-duplicates ------------------------------------------------------------------------------------

// Puts `command` on the clipboard; where the Clipboard API is missing or refused, copies the selected text
// of `code` (execCommand), or leaves it selected for the reader's own Ctrl+C.
async function copyCommand(command, code, status) {
  const say = (text, result) => {
    status.dataset.result = result;
    replace(status, text);
  };
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(command);
      say("Copied.", "copied");
      return;
    }
  } catch {
    // refused (no permission, page not focused): fall back to the selection
  }
  const range = document.createRange();
  range.selectNodeContents(code);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } catch {
    copied = false;
  }
  if (copied) say("Copied.", "copied");
  else say("Selected: press Ctrl+C (⌘C on a Mac) to copy.", "selected");
}

function commandBox(command) {
  const code = h("code", { class: "dup-command-text", testid: "dup-command" }, command);
  const status = h("span", { class: "copy-status", role: "status", "aria-live": "polite", testid: "dup-copy-status" });
  const button = h(
    "button",
    { type: "button", class: "btn btn-quiet", testid: "dup-copy", onclick: () => copyCommand(command, code, status) },
    "Copy",
  );
  return h("div", { class: "dup-command" }, code, h("span", { class: "dup-copy" }, button, status));
}

function dupRow(f, group) {
  const keep = f.uid === group.keep;
  return h(
    "tr",
    { testid: "dup-fact", class: keep ? "dup-keep" : null, dataset: { uid: f.uid, keep: String(keep) } },
    h(
      "td",
      { class: "fact-title" },
      factLink(f, "dup-fact-link"),
      keep ? [" ", h("span", { class: "badge keep", testid: "dup-keep", title: "Suggested to keep" }, "keep")] : null,
      h("div", { class: "uid-hint" }, h("span", { testid: "dup-uid" }, f.uid), ` · ${f.kind}`),
    ),
    h("td", { class: "num", testid: "dup-recalled" }, fmtInt(f.recalled_count)),
    h("td", { class: "nowrap" }, fmtTime(f.created_at)),
  );
}

function dupGroup(group, i) {
  const title = `${counted(group.facts.length, "fact")} · closest pair cosine ${cosine(group.similarity)}`;
  return h(
    "section",
    { class: "dup-group", testid: "dup-group", "aria-labelledby": `h-dup-${i}`, dataset: { keep: group.keep } },
    h("h3", { id: `h-dup-${i}` }, `Group ${i + 1}: ${title}`),
    table(["Fact", { label: "Recalled", num: true }, "Created"], group.facts.map((f) => dupRow(f, group)),
      { testid: "dup-table", caption: `Near-duplicates, group ${i + 1}`, captionHidden: true }),
    commandBox(group.command),
  );
}

// Why the report has no group, in a sentence.
function dupEmpty(body) {
  const active = body.compared + body.without_vector;
  if (!active) return "No active facts to compare yet.";
  if (!body.compared) {
    return `None of the ${counted(active, "active fact")} has a vector of the embedding model yet, so none ` +
      "could be compared (the facts may still be being embedded, or the service runs without a model).";
  }
  return `No near-duplicates among ${counted(body.compared, "active fact")} (cosine ≥ ${body.threshold}).`;
}

function dupCard(body) {
  const left = body.without_vector && body.compared
    ? h("p", { class: "muted small", testid: "dup-without-vector" },
      `${counted(body.without_vector, "active fact")} without a vector of the current model ` +
        `(being embedded, or redacted) ${body.without_vector === 1 ? "was" : "were"} not compared.`)
    : null;
  return card(
    "Near-duplicates",
    {
      id: "h-duplicates",
      class: "wide",
      testid: "curation-duplicates",
      help: `Active facts that say nearly the same thing (cosine ≥ ${body.threshold}, the threshold memory_write's ` +
        "\u201csimilar\u201d uses), closest first. The suggested keep is the most recalled, then the newest; the " +
        "command keeps it and retires the others (an operator runs it: this page changes nothing). Edit the " +
        "uids to keep another.",
    },
    body.groups.length
      ? [
          h("p", { class: "curation-total", testid: "dup-total" },
            `${counted(body.groups.length, "group")} among ${counted(body.compared, "active fact")} compared.`),
          body.groups.map(dupGroup),
        ]
      : empty(dupEmpty(body), "dup-empty"),
    left,
  );
}

// --- the view -------------------------------------------------------------------------------------------

export async function viewCuration(view, seq) {
  const store = neverStore();
  const [dups, top] = await Promise.all([
    api(profilePath("duplicates")),
    api(profilePath("facts"), { order: "recalled", status: "active", limit: TOP_RECALLED }),
    readNever(store),
  ]);
  if (seq !== state.renderSeq) return;
  const active = dups.compared + dups.without_vector; // every active fact, with a vector or without
  replace(
    view,
    h(
      "div",
      { class: "view-head" },
      h("div", {}, h("h1", {}, "Curation"),
        h("p", { class: "muted" }, "What to tidy: facts that say the same thing, facts no search finds, and the " +
          "facts searches return most. Recall counts come from the query log.")),
    ),
    h("div", { class: "grid" }, dupCard(dups), neverCard(store, active, seq), topCard(top.facts, active)),
  );
}
