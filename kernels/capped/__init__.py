"""The seams' test protocol's hooks (protocols/capped/)."""
