"""The EXTOLL protocols' hooks (protocols/extoll/): static and dynamic credits (hooks.py over
static.py and dynamic.py) and the fixed window (window.py)."""
