"""A small serving package: the model, and a helper that tunes the process."""
