"""Schneider et al.'s targets (docs/reproduction/portals.md)."""
