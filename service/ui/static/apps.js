// View: apps — the profile's OAuth grants (hosted MCP clients such as claude.ai or ChatGPT that signed in with
// MEMORY_OAUTH=on), newest first, and revoking one (DELETE /api/{profile}/grants/{id}: its tokens stop at once).

import { api, profilePath } from "./api.js";
import { card, empty, table } from "./components.js";
import { fmtTime, h, replace } from "./dom.js";
import { route } from "./nav.js";
import { describeError, showError } from "./session.js";
import { state } from "./state.js";

export async function viewApps(view, seq) {
  const body = await api(profilePath("grants"));
  if (seq !== state.renderSeq) return;
  const active = body.grants.filter((g) => g.active).length;
  replace(
    view,
    h(
      "div",
      { class: "view-head" },
      h("div", {}, h("h1", {}, "Apps"), h("p", { class: "muted" }, `${active} connected, ${body.grants.length - active} revoked`)),
    ),
    card(
      "Connected apps",
      {
        id: "h-apps",
        help:
          "Hosted MCP clients (claude.ai, ChatGPT, …) that a person approved on the sign-in page with this profile's " +
          "token or a code from memory grant code. The name is the one the app gave itself.",
      },
      body.grants.length
        ? table(
            ["App", { label: "Approved", wide: true }, { label: "Last token", wide: true }, "State"],
            body.grants.map(grantRow),
            { testid: "grants", caption: "Connected apps", captionHidden: true },
          )
        : empty("No app has signed in to this profile (OAuth sign-in needs MEMORY_OAUTH=on).", "grants-empty"),
    ),
  );
}

function grantRow(g) {
  const approved = g.approved_with === "consent_code" ? "with a consent code" : `with token ${g.approved_with}`;
  return h(
    "tr",
    { testid: "grant", dataset: { grant: g.grant_id } },
    h(
      "td",
      {},
      h("div", { testid: "grant-name" }, g.client_name || "(no name)"),
      h("div", { class: "small muted" }, g.redirect_hosts.join(", ")),
    ),
    h("td", { class: "wide-only" }, fmtTime(g.created_at), h("div", { class: "small muted" }, approved)),
    h("td", { class: "wide-only" }, fmtTime(g.last_issued_at)),
    h("td", {}, g.active ? revokeButton(g) : h("span", { class: "muted", title: g.revoke_reason || "" }, `revoked ${fmtTime(g.revoked_at)}`)),
  );
}

function revokeButton(g) {
  return h(
    "button",
    {
      type: "button",
      class: "btn btn-quiet",
      testid: "revoke-grant",
      onclick: async (event) => {
        if (!window.confirm(`Revoke ${g.client_name || "this app"}? Its tokens stop working at once.`)) return;
        event.currentTarget.disabled = true;
        try {
          await api(profilePath(`grants/${encodeURIComponent(g.grant_id)}`), {}, state.auth, { method: "DELETE" });
        } catch (exc) {
          showError(describeError(exc));
        }
        route();
      },
    },
    "Revoke",
  );
}
