"""The Myrinet family's hooks (protocols/lfc/): LFC (lfc.py with queues.py and recovery.py) and
FM/MC (fmmc.py)."""
