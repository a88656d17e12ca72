"""Which uids an import writes: a profile's export loaded into another profile of the same store (a fork, a
copy, the second half of a rename by hand) needs new uids, because uids are unique in the store.

For each fact of the document, in this order:
- its uid is this profile's already: the fact is there, skipped (an import into the profile it came from);
- this profile holds a copy of it (a fact whose `copied_from` is that uid): skipped, and links to it lead to
  the copy -- how a repeated import recognises what it wrote the first time;
- its uid is free in the store: kept (moving a profile to another store keeps every uid);
- its uid belongs to another profile: imported under a new uid, with `copied_from` = the document's uid.

`copied_from` is stored with the fact (never shown to clients; exported, so the record of where a copy came
from survives a move to another store). Every uid the document stores elsewhere -- supersession links, a
search's top_uid, the uids it handed back and the inactive facts it matched -- is translated with the same
table, so the copy's chains and query log point at the copy's facts. Query-log rows work the same way with
their ids (service.domain.portability): a taken id is renumbered and the row keeps the id it had in
`copied_from`, so a repeated import skips it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from service import ids
from service.domain.ports.canonical import UnitOfWork


@dataclass
class UidPlan:
    target: dict[str, str] = field(default_factory=dict)  # document uid -> uid in this profile
    present: set[str] = field(default_factory=set)  # document uids already in this profile (as such or copied)
    renamed: set[str] = field(default_factory=set)  # document uids imported under a new uid

    def uid(self, value: Any) -> Any:
        """The uid in this profile of a uid the document stores (anything else is returned as it is)."""
        return self.target.get(value, value) if isinstance(value, str) else value

    def uids(self, values: Iterable[Any]) -> list[Any]:
        return [self.uid(v) for v in values]

    def results(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What a search handed back (uid and scores per fact), its uids translated."""
        return [{**item, "uid": self.uid(item["uid"])} if "uid" in item else dict(item) for item in items]


def plan_uids(uow: UnitOfWork, profile_id: int, uids: list[str]) -> UidPlan:
    """The uid each of the document's facts gets in this profile (see the module's docstring)."""
    owners = uow.facts.owners(uids)
    copies = uow.facts.copies(profile_id)
    plan = UidPlan()
    for uid in uids:
        owner = owners.get(uid)
        if owner == profile_id:
            plan.target[uid] = uid
            plan.present.add(uid)
        elif uid in copies:
            plan.target[uid] = copies[uid]
            plan.present.add(uid)
        elif owner is None:
            plan.target[uid] = uid
        else:
            plan.target[uid] = ids.new_fact_uid()
            plan.renamed.add(uid)
    return plan
