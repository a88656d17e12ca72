// Review features of the Facts view: "memory as of a date" (a date picker; the list and a fact page as they
// stood then, from GET /api/{profile}/facts?as_of=) and the record of a redaction on a fact page.
// The DOM helper `h` and the formatters come from the caller, so this module has no state of its own.

const AS_OF = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$/;

// The as_of of the hash (#/facts?as_of=2026-01-02T10:00Z), or "" when absent or malformed.
export function asOfFrom(params) {
  const value = (params.get("as_of") || "").trim();
  return AS_OF.test(value) ? value : "";
}

// The picker, read as UTC: a datetime-local value "2026-01-02T10:00" becomes "2026-01-02T10:00Z".
export function asOfField(h, value) {
  return h(
    "div",
    { class: "field" },
    h("label", { for: "f-asof" }, "As of (UTC)"),
    h("input", {
      id: "f-asof",
      name: "as_of",
      type: "datetime-local",
      testid: "filter-asof",
      value: value ? value.replace(/Z$/, "").slice(0, 16) : "",
      title: "Show the facts as they stood at this instant (UTC); empty for now",
    }),
  );
}

export function asOfParam(formValue) {
  const v = String(formValue || "").trim();
  return v ? `${v.slice(0, 16)}Z` : "";
}

// "Memory as of …": what the list or the page shows, and the way back to now.
export function asOfNotice(h, fmtTime, asOf, nowHref) {
  return h(
    "div",
    { class: "notice", testid: "asof-notice", role: "status" },
    h("strong", {}, `Memory as of ${fmtTime(asOf)}. `),
    "Status, title, kind and tags as they were then; later changes are not shown. ",
    h("a", { href: nowHref, testid: "asof-now" }, "Back to now"),
  );
}

// A count of the record, or "—" when the record lacks it.
const count = (n) => (Number.isInteger(n) ? String(n) : "—");

// Who removed this fact's words, when and why (`memory redact`), and the SHA-256 of the removed text and title
// (64 hex digits each: they wrap on a phone); null when it was never redacted.
export function redactionNotice(h, fmtTime, redaction) {
  if (!redaction) return null;
  const hash = (label, value, testid) =>
    value && h("div", { class: "muted small" }, `SHA-256 of the removed ${label}: `, h("code", { testid }, value));
  return h(
    "div",
    { class: "notice retired", testid: "redaction-notice" },
    h("strong", {}, "Redacted. "),
    `Its title and text were removed on ${fmtTime(redaction.redacted_at)} by ${redaction.operator || "—"}: ` +
      `${redaction.reason || "—"}. `,
    `${count(redaction.queries_redacted)} search(es) and ${count(redaction.revisions_redacted)} earlier title(s) ` +
      "were redacted with it.",
    hash("text", redaction.text_sha256, "redaction-sha"),
    hash("title", redaction.title_sha256, "redaction-title-sha"),
  );
}
