// Signing in and out, the error banner, and what a failed view shows.

import { ApiError, api } from "./api.js";
import { destroyCharts } from "./charts.js";
import { $, replace } from "./dom.js";
import { route } from "./nav.js";
import { clearAuth, saveAuth, state } from "./state.js";

// Banner, login, chrome

export function showError(message) {
  const banner = $("[data-testid=error-banner]");
  replace($("[data-testid=error-message]"), message);
  banner.hidden = false;
}

export function hideError() {
  $("[data-testid=error-banner]").hidden = true;
}

export function describeError(exc) {
  if (!(exc instanceof ApiError)) return `Unexpected error: ${exc && exc.message ? exc.message : String(exc ?? "no detail")}`;
  if (exc.status === 0) return exc.message;
  return `${exc.message} (HTTP ${exc.status}${exc.code ? `, ${exc.code}` : ""})`;
}

// The API's 401 text is written for agents and curl (headers, proxies); the dashboard says what a reviewer can do.
export function unauthorizedMessage(profile) {
  if (!profile) return "The token was not accepted (HTTP 401). Paste the whole token; it may have been revoked.";
  return (
    `The token was not accepted for profile “${profile}” (HTTP 401). ` +
    "Check the profile name and paste the whole token; it may have been revoked."
  );
}

export function showLogin(prefillProfile) {
  state.renderSeq += 1; // a view still loading must not draw over the login form
  destroyCharts();
  replace($("#view"));
  $("#view").removeAttribute("aria-busy");
  $("[data-testid=nav]").hidden = true;
  $("[data-testid=session]").hidden = true;
  const login = $("[data-testid=login]");
  login.hidden = false;
  $("#login-token").value = "";
  if (prefillProfile !== undefined) $("#login-profile").value = prefillProfile;
  ($("#login-profile").value ? $("#login-token") : $("#login-profile")).focus();
}

export function showApp() {
  $("[data-testid=login]").hidden = true;
  $("[data-testid=nav]").hidden = false;
  $("[data-testid=session]").hidden = false;
  replace($("[data-testid=profile-name]"), state.auth.profile);
}

export async function onLogin(event) {
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
    if (exc instanceof ApiError && exc.status === 401) showError(unauthorizedMessage(profile));
    else showError(describeError(exc));
    $("#login-token").focus();
  } finally {
    submit.disabled = false;
  }
}

export function logout() {
  const profile = state.auth ? state.auth.profile : "";
  clearAuth();
  hideError();
  showLogin(profile);
}

// Errors during a view: 401 sends the reviewer back to the login form with a clear message.
export function handleViewError(exc, seq) {
  if (seq !== state.renderSeq) return;
  if (exc instanceof ApiError && exc.status === 401) {
    const profile = state.auth ? state.auth.profile : "";
    clearAuth();
    showLogin(profile);
    showError(unauthorizedMessage(profile));
    return;
  }
  showError(describeError(exc));
}
