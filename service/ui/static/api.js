// API access: one place; errors carry the message of the JSON error body. Fact titles looked up quietly.

import { $ } from "./dom.js";
import { SPINNER_DELAY_MS, state } from "./state.js";

// API access: one place, errors carry the message of the JSON error body

export class ApiError extends Error {
  constructor(status, code, message, param) {
    super(message);
    this.status = status;
    this.code = code;
    this.param = param;
  }
}

export let inflight = 0;
export let spinnerTimer = null;

export function busy(delta) {
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
export function apiUrl(path, params = {}) {
  const url = new URL(`../api/${path}`, document.baseURI);
  url.hash = "";
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") url.searchParams.set(key, String(value));
  }
  return url;
}

// `quiet` requests (background look-ups) do not show the spinner. `method` other than GET: only DELETE of a grant.
export async function api(path, params = {}, auth = state.auth, { quiet = false, method = "GET" } = {}) {
  if (!quiet) busy(+1);
  try {
    let response;
    try {
      response = await fetch(apiUrl(path, params), {
        method,
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

export function profilePath(suffix) {
  return `${encodeURIComponent(state.auth.profile)}/${suffix}`;
}

// Fact look-ups: the title and status of a fact named only by its uid (query log, top facts).
// One GET /api/{profile}/facts/{uid} per uid and page load (cached), at most FACT_LOOKUPS at a time, quiet:
// no spinner and no banner. A fact that cannot be fetched resolves to null and keeps its uid as its label.

export const FACT_LOOKUPS = 4;
export const lookups = { auth: null, cache: new Map(), queue: [], active: 0 };

export function lookupFact(uid) {
  if (lookups.auth !== state.auth) {
    lookups.auth = state.auth; // another sign-in: another profile or token, a fresh cache
    lookups.cache = new Map();
  }
  if (!lookups.cache.has(uid)) lookups.cache.set(uid, queueLookup(uid, state.auth));
  return lookups.cache.get(uid);
}

export function queueLookup(uid, auth) {
  return new Promise((resolve) => {
    // A look-up still queued when the reviewer logs out is dropped, not sent with the old token.
    lookups.queue.push(async () => resolve(auth && state.auth === auth ? await fetchFactQuietly(uid, auth) : null));
    pumpLookups();
  });
}

export async function fetchFactQuietly(uid, auth) {
  try {
    const path = `${encodeURIComponent(auth.profile)}/facts/${encodeURIComponent(uid)}`;
    const detail = await api(path, {}, auth, { quiet: true });
    return detail && detail.fact ? detail.fact : null;
  } catch {
    return null;
  }
}

export function pumpLookups() {
  while (lookups.active < FACT_LOOKUPS && lookups.queue.length) {
    const job = lookups.queue.shift();
    lookups.active += 1;
    job().finally(() => {
      lookups.active -= 1;
      pumpLookups();
    });
  }
}
