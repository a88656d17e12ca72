// The contract's names and limits, from the server (GET contract.json, built from service/contract.py):
// the dashboard keeps no copy of its own. Every module importing this one waits for it (top-level await).

const response = await fetch("contract.json", { headers: { Accept: "application/json" } });
if (!response.ok) throw new Error(`contract.json: HTTP ${response.status}`);
const contract = await response.json();

// A list of choices kept within the server's maximum, the maximum itself the last choice.
const upTo = (choices, max) => [...choices.filter((n) => n < max), max];

export const KINDS = contract.kinds;
export const STATUSES = contract.statuses;
export const WINDOWS = upTo([7, 30, 90], contract.days_max);
export const DAYS_DEFAULT = contract.days_default;
export const QUERY_LIMITS = upTo([20, 50, 100, 200], contract.listing_max);
export const LISTING_DEFAULT = contract.listing_default;
export const FACT_PAGE = contract.facts_page_default;
export const FACTS_PAGE_MAX = contract.facts_page_max;
