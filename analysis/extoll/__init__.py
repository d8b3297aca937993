"""The EXTOLL papers' targets (docs/reproduction/extoll.md, extoll_conference.md)."""
