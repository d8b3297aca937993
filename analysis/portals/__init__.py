"""Schneider et al.'s targets (docs/reproduction/portals_dragonfly.md)."""
