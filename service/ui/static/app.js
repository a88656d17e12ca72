// The reviewer's dashboard: a client of the REST API (no private endpoints), read-only but for revoking an app's
// OAuth grant (#/apps).
// The profile name and token live in sessionStorage only and travel as an Authorization header,
// never in a URL. Views are chosen by the hash: #/, #/queries, #/queries/<id>, #/facts, #/facts/<uid>,
// #/gaps and #/queries?gap=<id>&days=<n> (gaps.js), #/curation (curation.js), #/apps (apps.js).

import { viewApps } from "./apps.js";
import { destroyCharts } from "./charts.js";
import { viewCuration } from "./curation.js";
import { $ } from "./dom.js";
import { viewFact, viewFacts } from "./facts.js";
import { viewGapSearches, viewGaps } from "./gaps.js";
import { viewOverview } from "./overview.js";
import { setRouter } from "./nav.js";
import { viewQueries } from "./queries.js";
import { handleViewError, hideError, logout, onLogin, showApp, showLogin } from "./session.js";
import { state } from "./state.js";

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
      await viewGapSearches(view, seq, params);
    } else if (parts[0] === "queries") {
      setNav("queries");
      document.title = "Query log · Memory dashboard";
      await viewQueries(view, seq, parts[1]);
    } else if (parts[0] === "apps") {
      setNav("apps");
      document.title = "Apps · Memory dashboard";
      await viewApps(view, seq);
    } else if (parts[0] === "gaps") {
      setNav("gaps");
      document.title = "Gaps · Memory dashboard";
      await viewGaps(view, seq);
    } else if (parts[0] === "curation") {
      setNav("curation");
      document.title = "Curation · Memory dashboard";
      await viewCuration(view, seq);
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

function start() {
  setRouter(route);
  $("[data-testid=login-form]").addEventListener("submit", onLogin);
  $("[data-testid=logout]").addEventListener("click", logout);
  $(".banner-close").addEventListener("click", hideError);
  window.addEventListener("hashchange", () => route());
  route();
}

start();
