"""Liu and Panda's targets (docs/reproduction/infiniband.md, nas_skeletons.md)."""
