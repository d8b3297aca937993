"""Routing functions (network.routing): the registry (registry.py), one record module per
routing or family of routings (table.py, dragonfly.py, valiant_mesh.py), and the channel
dependency check every configuration passes (deadlock.py). Their route functions are Numba
code in kernels/ (kernels/routing.py and the modules the records name)."""
