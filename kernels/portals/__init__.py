"""The Portals 4 family's hooks (protocols/portals/): FECN/BECN (fecn.py), RDRP (rdrp.py)."""
