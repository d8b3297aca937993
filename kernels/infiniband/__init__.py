"""The InfiniBand schemes' hooks (protocols/infiniband/): hardware, static and dynamic."""
