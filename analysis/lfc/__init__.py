"""Bhoedjang et al.'s targets (docs/reproduction/myrinet_lfc.md)."""
