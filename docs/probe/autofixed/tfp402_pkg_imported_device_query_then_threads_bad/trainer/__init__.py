"""A training package: device discovery and the input pipeline."""
