// What the dashboard keeps: the signed-in profile and token (sessionStorage only), the window, render state.

import { DAYS_DEFAULT, LISTING_DEFAULT, WINDOWS } from "./contract.js";

export const AUTH_KEY = "memory.dashboard.auth";
export const DAYS_KEY = "memory.dashboard.days";
export const SPINNER_DELAY_MS = 150;
export const state = {
  auth: loadAuth(),
  days: loadDays(),
  queriesLimit: LISTING_DEFAULT,
  charts: [],
  renderSeq: 0,
};

// Session (sessionStorage only)

export function loadAuth() {
  try {
    const raw = sessionStorage.getItem(AUTH_KEY);
    const auth = raw ? JSON.parse(raw) : null;
    return auth && auth.profile && auth.token ? auth : null;
  } catch {
    return null;
  }
}

export function saveAuth(auth) {
  state.auth = auth;
  sessionStorage.setItem(AUTH_KEY, JSON.stringify(auth));
}

export function clearAuth() {
  state.auth = null;
  sessionStorage.removeItem(AUTH_KEY);
}

export function loadDays() {
  const n = Number(sessionStorage.getItem(DAYS_KEY));
  return WINDOWS.includes(n) ? n : DAYS_DEFAULT;
}
