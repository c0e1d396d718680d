"""A training package: input checks and the work itself."""
