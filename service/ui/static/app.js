// The reviewer's dashboard: a read-only client of the REST API (no private endpoints).
// The profile name and token live in sessionStorage only and travel as an Authorization header,
// never in a URL. Views are chosen by the hash: #/, #/queries, #/queries/<id>, #/facts, #/facts/<uid>,
// #/gaps and #/queries?gap=<id>&days=<n> (gaps.js).

import { viewGapSearches, viewGaps } from "./gaps.js";

import { asOfField, asOfFrom, asOfNotice, asOfParam, redactionNotice } from "./review.js";

const AUTH_KEY = "memory.dashboard.auth";
const DAYS_KEY = "memory.dashboard.days";
const WINDOWS = [7, 30, 90, 365];
const QUERY_LIMITS = [20, 50, 100, 200, 500];
const KINDS = ["user", "preference", "project", "reference", "research", "decision"];
const STATUSES = ["active", "retired", "superseded"];
const FACT_PAGE = 50;
const SPINNER_DELAY_MS = 150;

const COLORS = {
  searches: "#3566c7",
  searchesFill: "rgba(53, 102, 199, 0.72)",
  miss: "#c0321d",
  missFill: "rgba(192, 50, 29, 0.92)",
  created: "#2f7d4f",
  createdFill: "rgba(47, 125, 79, 0.8)",
  retired: "#7a6a55",
  retiredFill: "rgba(122, 106, 85, 0.8)",
  axis: "#4a5262",
  grid: "rgba(30, 40, 60, 0.08)",
};

const state = {
  auth: loadAuth(),
  days: loadDays(),
  queriesLimit: 50,
  charts: [],
  renderSeq: 0,
};

// ---------------------------------------------------------------------------------------------
// Small DOM helpers (text only: user content is never parsed as HTML)

function h(tag, attrs = {}, ...children) {
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

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const $ = (sel, root = document) => root.querySelector(sel);

function fmtInt(n) {
  return n === null || n === undefined ? "—" : Number(n).toLocaleString("en-US");
}

function fmtTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

function fmtDay(iso) {
  return iso ? String(iso).slice(0, 10) : "—";
}

function fmtMs(v) {
  if (v === null || v === undefined) return "—";
  return v < 10 ? `${Number(v).toFixed(1)} ms` : `${Math.round(v)} ms`;
}

function fmtScore(v) {
  return v === null || v === undefined ? "—" : Number(v).toFixed(4);
}

function pct(part, whole) {
  return whole ? `${Math.round((100 * part) / whole)}%` : "0%";
}

function factHref(uid) {
  return `#/facts/${encodeURIComponent(uid)}`;
}

// ---------------------------------------------------------------------------------------------
// Session (sessionStorage only)

function loadAuth() {
  try {
    const raw = sessionStorage.getItem(AUTH_KEY);
    const auth = raw ? JSON.parse(raw) : null;
    return auth && auth.profile && auth.token ? auth : null;
  } catch {
    return null;
  }
}

function saveAuth(auth) {
  state.auth = auth;
  sessionStorage.setItem(AUTH_KEY, JSON.stringify(auth));
}

function clearAuth() {
  state.auth = null;
  sessionStorage.removeItem(AUTH_KEY);
}

function loadDays() {
  const n = Number(sessionStorage.getItem(DAYS_KEY));
  return WINDOWS.includes(n) ? n : 30;
}

// ---------------------------------------------------------------------------------------------
// API access: one place, errors carry the message of the JSON error body

class ApiError extends Error {
  constructor(status, code, message, param) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

let inflight = 0;
let spinnerTimer = null;

function busy(delta) {
  inflight += delta;
  const spinner = $("[data-testid=loading]");
  if (inflight > 0 && !spinnerTimer && spinner.hidden) {
    spinnerTimer = setTimeout(() => {
      spinnerTimer = null;
      if (inflight > 0) spinner.hidden = false;
    }, SPINNER_DELAY_MS);
  }
  if (inflight <= 0) {
    inflight = 0;
    clearTimeout(spinnerTimer);
    spinnerTimer = null;
    spinner.hidden = true;
  }
}

// The API lives beside /ui/ under the same base address (a reverse proxy may add a path prefix).
function apiUrl(path, params = {}) {
  const url = new URL(`../api/${path}`, document.baseURI);
  url.hash = "";
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, String(value));
  }
  return url;
}

// `quiet` requests (background look-ups) do not show the spinner.
async function api(path, params = {}, auth = state.auth, { quiet = false } = {}) {
  if (!quiet) busy(+1);
  try {
    let response;
    try {
      response = await fetch(apiUrl(path, params), {
        headers: { Authorization: `Bearer ${auth ? auth.token : ""}`, Accept: "application/json" },
        cache: "no-store",
        credentials: "omit",
        referrerPolicy: "no-referrer",
      });
    } catch (exc) {
      throw new ApiError(0, "network", `Could not reach the service (${exc.message}).`);
    }
    let body = null;
    try {
      body = await response.json();
    } catch {
      body = null;
    }
    if (!response.ok) {
      const err = body && body.error ? body.error : {};
      throw new ApiError(
        response.status,
        err.code || `http_${response.status}`,
        err.message || `The service answered ${response.status} ${response.statusText}`.trim(),
        err.param,
      );
    }
    return body;
  } finally {
    if (!quiet) busy(-1);
  }
}

function profilePath(suffix) {
  return `${encodeURIComponent(state.auth.profile)}/${suffix}`;
}

// ---------------------------------------------------------------------------------------------
// Fact look-ups: the title and status of a fact named only by its uid (query log, top facts).
// One GET /api/{profile}/facts/{uid} per uid and page load (cached), at most FACT_LOOKUPS at a time, quiet:
// no spinner and no banner. A fact that cannot be fetched resolves to null and keeps its uid as its label.

const FACT_LOOKUPS = 4;
const lookups = { auth: null, cache: new Map(), queue: [], active: 0 };

function lookupFact(uid) {
  if (lookups.auth !== state.auth) {
    lookups.auth = state.auth; // another sign-in: another profile or token, a fresh cache
    lookups.cache = new Map();
  }
  if (!lookups.cache.has(uid)) lookups.cache.set(uid, queueLookup(uid, state.auth));
  return lookups.cache.get(uid);
}

function queueLookup(uid, auth) {
  return new Promise((resolve) => {
    // A look-up still queued when the reviewer logs out is dropped, not sent with the old token.
    lookups.queue.push(async () => resolve(auth && state.auth === auth ? await fetchFactQuietly(uid, auth) : null));
    pumpLookups();
  });
}

async function fetchFactQuietly(uid, auth) {
  try {
    const path = `${encodeURIComponent(auth.profile)}/facts/${encodeURIComponent(uid)}`;
    const detail = await api(path, {}, auth, { quiet: true });
    return detail && detail.fact ? detail.fact : null;
  } catch {
    return null;
  }
}

function pumpLookups() {
  while (lookups.active < FACT_LOOKUPS && lookups.queue.length) {
    const job = lookups.queue.shift();
    lookups.active += 1;
    job().finally(() => {
      lookups.active -= 1;
      pumpLookups();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Banner, login, chrome

function showError(message) {
  const banner = $("[data-testid=error-banner]");
  $("[data-testid=error-message]").textContent = message;
  banner.hidden = false;
}

function hideError() {
  $("[data-testid=error-banner]").hidden = true;
}

function describeError(exc) {
  if (!(exc instanceof ApiError)) return `Unexpected error: ${exc && exc.message ? exc.message : exc}`;
  if (exc.status === 0) return exc.message;
  return `${exc.message} (HTTP ${exc.status}${exc.code ? `, ${exc.code}` : ""})`;
}

function unauthorizedMessage(profile, exc) {
  return (
    `The token was not accepted for profile “${profile}” (HTTP 401: ${exc.message}). ` +
    "Check the profile name and paste the whole token; it may have been revoked."
  );
}

function showLogin(prefillProfile) {
  state.renderSeq += 1; // a view still loading must not draw over the login form
  destroyCharts();
  $("#view").replaceChildren();
  $("#view").removeAttribute("aria-busy");
  $("[data-testid=nav]").hidden = true;
  $("[data-testid=session]").hidden = true;
  const login = $("[data-testid=login]");
  login.hidden = false;
  $("#login-token").value = "";
  if (prefillProfile !== undefined) $("#login-profile").value = prefillProfile;
  ($("#login-profile").value ? $("#login-token") : $("#login-profile")).focus();
}

function showApp() {
  $("[data-testid=login]").hidden = true;
  $("[data-testid=nav]").hidden = false;
  $("[data-testid=session]").hidden = false;
  $("[data-testid=profile-name]").textContent = state.auth.profile;
}

async function onLogin(event) {
  event.preventDefault();
  hideError();
  const profile = $("#login-profile").value.trim();
  const token = $("#login-token").value.trim();
  if (!token) {
    showError("Paste the profile's token.");
    return;
  }
  const submit = $("[data-testid=login-submit]");
  submit.disabled = true;
  try {
    let name = profile;
    if (!name) {
      const listing = await api("profiles", {}, { token });
      name = listing.profiles && listing.profiles[0] ? listing.profiles[0].name : "";
      if (!name) throw new ApiError(401, "unauthorized", "the token opens no profile");
    } else {
      await api(`${encodeURIComponent(name)}/stats`, { days: 1 }, { token });
    }
    saveAuth({ profile: name, token });
    $("#login-token").value = "";
    showApp();
    await route();
  } catch (exc) {
    if (exc instanceof ApiError && exc.status === 401) showError(unauthorizedMessage(profile || "(from token)", exc));
    else showError(describeError(exc));
    $("#login-token").focus();
  } finally {
    submit.disabled = false;
  }
}

function logout() {
  const profile = state.auth ? state.auth.profile : "";
  clearAuth();
  hideError();
  showLogin(profile);
}

// Errors during a view: 401 sends the reviewer back to the login form with a clear message.
function handleViewError(exc, seq) {
  if (seq !== state.renderSeq) return;
  if (exc instanceof ApiError && exc.status === 401) {
    const profile = state.auth ? state.auth.profile : "";
    clearAuth();
    showLogin(profile);
    showError(unauthorizedMessage(profile, exc));
    return;
  }
  showError(describeError(exc));
}

// ---------------------------------------------------------------------------------------------
// Charts (uPlot)

function destroyCharts() {
  for (const { chart, observer } of state.charts) {
    observer.disconnect();
    chart.destroy();
  }
  state.charts = [];
}

function chartHeight() {
  return window.matchMedia("(max-width: 600px)").matches ? 180 : 230;
}

function mount(chartOpts, data, container) {
  if (!window.uPlot) {
    container.append(h("p", { class: "muted" }, "The chart library did not load; see the table below."));
    return;
  }
  const width = Math.max(240, container.clientWidth || 600);
  const chart = new window.uPlot({ ...chartOpts, width, height: chartHeight() }, data, container);
  let last = width;
  const observer = new ResizeObserver(() => {
    const w = Math.max(240, container.clientWidth);
    if (Math.abs(w - last) > 2) {
      last = w;
      chart.setSize({ width: w, height: chartHeight() });
    }
  });
  observer.observe(container);
  state.charts.push({ chart, observer });
}

function countAxis(extra = {}) {
  return {
    stroke: COLORS.axis,
    grid: { stroke: COLORS.grid },
    ticks: { show: false },
    size: 44,
    values: (u, vals) => vals.map((v) => (Number.isInteger(v) ? fmtInt(v) : "")),
    ...extra,
  };
}

function countScale() {
  return { range: (u, min, max) => [0, Math.max(4, Math.ceil((max || 0) * 1.1))] };
}

function dayTs(day) {
  return Date.parse(`${day}T00:00:00Z`) / 1000;
}

// The legend of a daily chart: the hovered day's values, and the window's totals when no day is hovered.
function windowTotalLabel(days) {
  return `total of ${days} days`;
}

function dayLegendValue(rows) {
  return (u, ts, sidx, idx) => (idx == null ? windowTotalLabel(rows.length) : new Date(ts * 1000).toISOString().slice(0, 10));
}

function countLegendValue(rows, key) {
  const total = rows.reduce((sum, r) => sum + Number(r[key] || 0), 0);
  return (u, v, sidx, idx) => fmtInt(idx == null ? total : v);
}

// A per-day bar chart: one x point per day of the window, quiet days drawn as zero.
function dailyChart(container, rows, series, { overlay = false } = {}) {
  const xs = rows.map((r) => dayTs(r.date));
  const data = [xs, ...series.map((s) => rows.map((r) => Number(r[s.key] || 0)))];
  const many = rows.length > 60;
  const n = series.length;
  const uSeries = series.map((s, i) => ({
    label: s.label,
    value: countLegendValue(rows, s.key),
    stroke: s.stroke,
    fill: s.fill,
    width: 0,
    points: { show: false },
    paths: window.uPlot.paths.bars({
      size: overlay ? [many ? 1 : 0.72, 48] : [(many ? 1 : 0.8) / n, 24],
      align: overlay ? 0 : i === 0 ? -1 : 1,
      gap: many ? 0 : 1,
    }),
  }));
  mount(
    {
      tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: {
        x: { time: true, range: (u, min, max) => [min - 43200, max + 43200] },
        y: countScale(),
      },
      series: [{ label: "Day", value: dayLegendValue(rows) }, ...uSeries],
      axes: [{ stroke: COLORS.axis, grid: { show: false }, ticks: { stroke: COLORS.grid } }, countAxis()],
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { live: true },
    },
    data,
    container,
  );
}

// A bar chart over named categories; each series is drawn only where it has values.
function categoryChart(container, labels, series, shortLabels = labels) {
  const xs = labels.map((_, i) => i);
  mount(
    {
      scales: { x: { time: false, range: [-0.6, labels.length - 0.4] }, y: countScale() },
      series: [
        { label: "Bucket", value: (u, v) => (v == null ? "—" : labels[v]) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.stroke,
          fill: s.fill,
          width: 0,
          points: { show: false },
          paths: window.uPlot.paths.bars({ size: [0.62, 90], gap: 2 }),
        })),
      ],
      axes: [
        {
          stroke: COLORS.axis,
          grid: { show: false },
          ticks: { show: false },
          splits: () => xs,
          values: (u, vals) => {
            const names = u.width / labels.length < 72 ? shortLabels : labels;
            return vals.map((v) => names[v] ?? "");
          },
        },
        countAxis(),
      ],
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      legend: { show: false },
    },
    [xs, ...series.map((s) => s.values)],
    container,
  );
}

// ---------------------------------------------------------------------------------------------
// Building blocks

function card(title, opts = {}, ...children) {
  return h(
    "section",
    { class: `card ${opts.class || ""}`.trim(), testid: opts.testid, "aria-labelledby": opts.id },
    h("h2", { id: opts.id }, title),
    opts.help ? h("p", { class: "muted help" }, opts.help) : null,
    ...children,
  );
}

function stat(label, value, testid, opts = {}) {
  return h(
    "div",
    { class: `stat ${opts.class || ""}`.trim(), title: opts.title },
    h("div", { class: "stat-value", testid, dataset: { value: String(value ?? "") } }, fmtInt(value)),
    h("div", { class: "stat-label" }, label),
    opts.note ? h("div", { class: "stat-note" }, opts.note) : null,
  );
}

// A column header: a label, or {label, num (right-aligned), wide (hidden on a phone)}.
function headerCell(x) {
  const cls = [x.num && "num", x.wide && "wide-only"].filter(Boolean).join(" ");
  return h("th", { scope: "col", class: cls || null }, x.label || x);
}

function table(headers, rows, opts = {}) {
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

function empty(text, testid = "empty-state") {
  return h("p", { class: "empty", testid }, text);
}

function meter(value, max, cls = "") {
  const width = max ? Math.max(2, Math.round((100 * value) / max)) : 0;
  return h("span", { class: `meter ${cls}`.trim(), "aria-hidden": "true" }, h("span", { style: `width:${width}%` }));
}

function statusBadge(status, testid) {
  return h("span", { class: `badge status-${status}`, testid }, status);
}

// A link to a fact named by its uid: labelled by the uid until the fact's title arrives (lookupFact), the uid
// kept as the tooltip (and as small text with `showUid`); a retired or superseded fact gets its status badge.
// data-resolved on the link says how it ended: "title" or "uid" (the fact could not be fetched).
function factLabel(uid, { title = "", testid = "fact-label", showUid = false } = {}) {
  const link = h("a", { href: factHref(uid), class: title ? null : "uid-text", title: uid, testid, dataset: { uid } }, title || uid);
  const label = h("span", { class: "fact-label" }, link);
  lookupFact(uid).then((fact) => fillFactLabel(label, link, fact, showUid));
  return label;
}

function fillFactLabel(label, link, fact, showUid) {
  link.dataset.resolved = fact ? "title" : "uid";
  if (!fact) return;
  link.textContent = fact.title;
  link.classList.remove("uid-text");
  if (showUid) label.append(" ", h("span", { class: "uid-hint" }, fact.uid));
  if (fact.status !== "active") label.append(" ", statusBadge(fact.status, "fact-label-status"));
}

function tagList(tags) {
  if (!tags || !tags.length) return h("span", { class: "muted" }, "—");
  return h(
    "span",
    { class: "tags" },
    tags.map((t) => h("a", { class: "tag", href: `#/facts?tag=${encodeURIComponent(t)}` }, t)),
  );
}

function windowSelector(onChange) {
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

// ---------------------------------------------------------------------------------------------
// View: overview (query-log summary + store shape)

// The summary names each top fact by uid and current title; its status (a top fact may since have been
// retired or superseded) comes from the fact itself, through factLabel.
function topFactsCard(topFacts) {
  return card(
    "Top facts",
    { id: "h-topf", help: "Facts that were the best hit most often; marked when since retired or superseded." },
    topFacts.length
      ? table(
          ["Fact", { label: "Best hit", num: true }],
          topFacts.map((f) =>
            h(
              "tr",
              { testid: "top-fact", dataset: { uid: f.uid } },
              h("td", {}, factLabel(f.uid, { title: f.title, testid: "top-fact-link" })),
              h("td", { class: "num" }, fmtInt(f.count)),
            ),
          ),
          { testid: "top-facts", caption: "Top facts", captionHidden: true },
        )
      : empty("No search returned a fact in this window.", "top-facts-empty"),
  );
}

async function viewOverview(view, seq) {
  const days = state.days;
  const [summary, stats] = await Promise.all([
    api(profilePath("queries/summary"), { days }),
    api(profilePath("stats"), { days }),
  ]);
  if (seq !== state.renderSeq) return;
  const t = summary.totals;
  const storeEmpty = stats.facts + stats.retired + stats.superseded === 0;

  const header = h(
    "div",
    { class: "view-head" },
    h("div", {}, h("h1", {}, "Overview"), h("p", { class: "muted" }, `${summary.from} – ${summary.to} (UTC), ${days} days`)),
    windowSelector(() => route()),
  );

  const notices = [];
  if (storeEmpty && t.searches === 0) {
    notices.push(
      empty(
        "This profile is empty: no facts have been written and no searches recorded yet. " +
          "Agents fill it through the MCP tools memory_write and memory_search.",
      ),
    );
  } else if (t.searches === 0) {
    notices.push(empty(`No searches were recorded in the last ${days} days.`, "empty-searches"));
  }

  // Totals
  const totals = h(
    "div",
    { class: "stats-row", testid: "totals" },
    stat("searches", t.searches, "total-searches"),
    stat("zero-match searches", t.zero_match, "total-zero-match", {
      class: t.zero_match ? "miss" : "",
      note: t.searches ? `${pct(t.zero_match, t.searches - t.unknown_matched)} of known` : null,
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

  // Daily searches
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
  const dailyCard = card(
    "Searches per day",
    {
      id: "h-daily",
      class: "wide",
      help: "Blue: all searches. Red: searches that found nothing (zero-match), drawn over the blue bar of the same day. " +
        "The legend gives the window's totals; point at a day for its own.",
    },
    dailyBox,
    dailyTable,
  );

  // Match buckets
  const buckets = summary.match_buckets;
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

  // Top queries, tags, facts
  const maxQ = Math.max(1, ...summary.top_queries.map((q) => q.count));
  const topQueries = card(
    "Top queries",
    { id: "h-topq", help: "Most frequent search texts. Red rows had misses: the agent expected memory to know this." },
    summary.top_queries.length
      ? table(
          ["Query", { label: "Searches", num: true }, { label: "Zero-match", num: true }],
          summary.top_queries.map((q) =>
            h(
              "tr",
              { class: q.zero_match ? "miss" : "", dataset: { zeroMatch: String(q.zero_match) } },
              h("td", { class: "query-text" }, q.query, meter(q.count, maxQ, q.zero_match ? "meter-miss" : "")),
              h("td", { class: "num" }, fmtInt(q.count)),
              h("td", { class: "num" }, q.zero_match ? h("span", { class: "badge miss" }, fmtInt(q.zero_match)) : "0"),
            ),
          ),
          { testid: "top-queries", caption: "Top queries", captionHidden: true },
        )
      : empty("No searches in this window.", "top-queries-empty"),
  );
  const maxT = Math.max(1, ...summary.top_tags.map((x) => x.count));
  const topTags = card(
    "Top search tags",
    { id: "h-topt", help: "Tags agents filtered their searches by." },
    summary.top_tags.length
      ? table(
          ["Tag", { label: "Searches", num: true }],
          summary.top_tags.map((x) =>
            h("tr", {}, h("td", {}, x.tag, meter(x.count, maxT)), h("td", { class: "num" }, fmtInt(x.count))),
          ),
          { testid: "top-tags", caption: "Top search tags", captionHidden: true },
        )
      : empty("No tagged searches in this window.", "top-tags-empty"),
  );
  const topFacts = topFactsCard(summary.top_facts);

  // Store shape
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

  view.replaceChildren(
    header,
    ...notices,
    h("div", { class: "grid" }, card("Searches", { id: "h-totals", class: "wide" }, totals), dailyCard, bucketCard,
      topQueries, h("div", { class: "stack" }, topFacts, topTags), storeCard),
  );

  dailyChart(dailyBox, summary.daily, [
    { key: "searches", label: "Searches", stroke: COLORS.searches, fill: COLORS.searchesFill },
    { key: "zero_match", label: "Zero-match", stroke: COLORS.miss, fill: COLORS.missFill },
  ], { overlay: true });
  const labels = buckets.map((b) => b.label);
  categoryChart(bucketBox, labels, [
    { label: "Nothing found", stroke: COLORS.miss, fill: COLORS.missFill,
      values: buckets.map((b) => (b.label === "0" ? b.count : null)) },
    { label: "Searches", stroke: COLORS.searches, fill: COLORS.searchesFill,
      values: buckets.map((b) => (b.label === "0" ? null : b.count)) },
  ]);
  categoryChart(kindsBox, KINDS, [
    { label: "Active facts", stroke: COLORS.searches, fill: COLORS.searchesFill, values: KINDS.map((k) => stats.kinds[k] ?? 0) },
  ], ["user", "pref", "proj", "ref", "res", "dec"]);
  dailyChart(growthBox, stats.daily, [
    { key: "created", label: "Created", stroke: COLORS.created, fill: COLORS.createdFill },
    { key: "retired", label: "Retired", stroke: COLORS.retired, fill: COLORS.retiredFill },
  ]);
}

// ---------------------------------------------------------------------------------------------
// View: recent query-log rows, with one row's details

function matchedCell(row) {
  if (row.matched_count === null || row.matched_count === undefined) {
    return h("td", { class: "num" }, h("span", { class: "badge unknown", title: "matched count not known exactly" }, "unknown"));
  }
  return h("td", { class: "num" }, row.matched_count === 0 ? h("span", { class: "badge miss" }, "0") : fmtInt(row.matched_count));
}

// Columns: the important ones first; those marked `wide` are hidden on a phone (the row's details have them),
// where the time moves under the query.
const QUERY_COLUMNS = [
  { label: "When", wide: true },
  "Query",
  { label: "Matched", num: true },
  { label: "Returned", num: true, wide: true },
  "Top hit",
  { label: "Tags", wide: true },
  { label: "Kind", wide: true },
  { label: "Latency", num: true, wide: true },
];

function queryRow(q, open) {
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

async function viewQueries(view, seq, selectedId) {
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
  view.replaceChildren(
    h(
      "div",
      { class: "view-head" },
      h("div", {}, h("h1", {}, "Query log"), h("p", { class: "muted" }, "Newest first; the listing keeps the 500 newest rows. Click a row for what it returned.")),
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

async function showQueryDetail(slot, id, seq) {
  hideError();
  let row;
  try {
    row = (await api(profilePath(`queries/${encodeURIComponent(id)}`))).query;
  } catch (exc) {
    handleViewError(exc, seq);
    return;
  }
  if (seq !== state.renderSeq) return;
  slot.replaceChildren(queryDetailCard(row));
  slot.scrollIntoView({ block: "nearest" });
}

function queryDetailCard(row) {
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
      h("dt", {}, "Mode"), h("dd", {}, row.mode || "—"),
      row.inactive_matched !== undefined && row.inactive_matched !== null
        ? [h("dt", {}, "Retired/superseded matched"), h("dd", {}, fmtInt(row.inactive_matched))]
        : null,
      h("dt", {}, "Latency"), h("dd", {}, fmtMs(row.latency_ms)),
    ),
    results.length
      ? table(
          [{ label: "#", num: true }, "Fact", { label: "Fused", num: true }, { label: "Lexical", num: true }, { label: "Vector", num: true }],
          results.map(resultRow),
          { testid: "query-results", caption: "Facts returned", captionHidden: true },
        )
      : empty("This search handed back nothing.", "query-results-empty"),
    onceKnown(row.inactive_matches || []),
  );
}

// The retired or superseded facts a search also matched: for a miss, what memory once knew.
function onceKnown(matches) {
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

function resultRow(r, i) {
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

// ---------------------------------------------------------------------------------------------
// View: fact browser

function factFilters(params) {
  return {
    status: STATUSES.includes(params.get("status")) ? params.get("status") : "",
    kind: KINDS.includes(params.get("kind")) ? params.get("kind") : "",
    tag: (params.get("tag") || "").trim(),
    as_of: asOfFrom(params),
  };
}

// Status right after the title; the columns marked `wide` are hidden on a phone (the fact page has them).
const FACT_COLUMNS = ["Title", "Status", { label: "Kind", wide: true }, "Tags", { label: "Created", wide: true }];

function factRows(facts, asOf = "") {
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

async function viewFacts(view, seq, params) {
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
        for (const key of ["status", "kind", "tag"]) {
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
          tbody.append(...factRows(next.facts, filters.as_of));
          shown += next.facts.length;
          count.textContent = String(shown);
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
        filters.status || filters.kind || filters.tag ? "No facts match these filters." : "This profile has no facts yet.",
        "facts-empty",
      );

  view.replaceChildren(
    h("div", { class: "view-head" }, h("div", {}, h("h1", {}, "Facts"), h("p", { class: "muted" }, "Every fact of the profile, newest first. Nothing is ever deleted."))),
    filters.as_of ? asOfNotice(h, fmtTime, filters.as_of, "#/facts") : null,
    card("Filter", { id: "h-filter", class: "wide" }, form),
    card("Facts", { id: "h-facts", class: "wide" }, list),
  );
}

// ---------------------------------------------------------------------------------------------
// View: one fact, its supersession chain and revisions

async function viewFact(view, seq, uid, params) {
  const asOf = asOfFrom(params);
  let detail;
  try {
    detail = await api(profilePath(`facts/${encodeURIComponent(uid)}`), asOf ? { as_of: asOf } : {});
  } catch (exc) {
    if (seq === state.renderSeq && !(exc instanceof ApiError && exc.status === 401)) {
      view.replaceChildren(
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

  view.replaceChildren(
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

// ---------------------------------------------------------------------------------------------
// Router

function parseHash() {
  const raw = location.hash.replace(/^#/, "") || "/";
  const [path, qs] = raw.split("?");
  const parts = path.split("/").filter(Boolean).map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  return { parts, params: new URLSearchParams(qs || "") };
}

function setNav(name) {
  for (const a of document.querySelectorAll("[data-nav]")) {
    if (a.dataset.nav === name) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
}

async function route() {
  if (!state.auth) {
    showLogin();
    return;
  }
  showApp();
  hideError();
  const seq = ++state.renderSeq;
  destroyCharts();
  const view = $("#view");
  delete view.dataset.ready;
  view.setAttribute("aria-busy", "true");
  const { parts, params } = parseHash();
  try {
    if (parts[0] === "facts" && parts[1]) {
      setNav("facts");
      document.title = "Fact · Memory dashboard";
      await viewFact(view, seq, parts[1], params);
    } else if (parts[0] === "facts") {
      setNav("facts");
      document.title = "Facts · Memory dashboard";
      await viewFacts(view, seq, params);
    } else if (parts[0] === "queries" && params.get("gap")) {
      setNav("queries");
      document.title = "Query log · Memory dashboard";
      await viewGapSearches(view, seq, params, gapsUi());
    } else if (parts[0] === "queries") {
      setNav("queries");
      document.title = "Query log · Memory dashboard";
      await viewQueries(view, seq, parts[1]);
    } else if (parts[0] === "gaps") {
      setNav("gaps");
      document.title = "Gaps · Memory dashboard";
      await viewGaps(view, seq, gapsUi());
    } else {
      setNav("overview");
      document.title = "Overview · Memory dashboard";
      await viewOverview(view, seq);
    }
    if (seq === state.renderSeq) view.dataset.ready = parts[0] || "overview";
  } catch (exc) {
    handleViewError(exc, seq);
  } finally {
    if (seq === state.renderSeq) view.removeAttribute("aria-busy");
  }
}

// What gaps.js draws with (the shared helpers of this file).
function gapsUi() {
  return { h, api, profilePath, state, card, table, empty, fmtInt, fmtTime, factHref, statusBadge, windowSelector,
    route, queryRow, QUERY_COLUMNS, showQueryDetail };
}

function start() {
  $("[data-testid=login-form]").addEventListener("submit", onLogin);
  $("[data-testid=logout]").addEventListener("click", logout);
  $(".banner-close").addEventListener("click", hideError);
  window.addEventListener("hashchange", () => route());
  route();
}

start();
