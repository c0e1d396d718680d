"""A scoring package: the model file and the objects that score with it."""
