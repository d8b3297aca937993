"""Bhoedjang et al.'s targets (docs/reproduction/lfc.md)."""
