"""A small serving package: a model registry and the features its workers compute."""
