"""A scoring package: where the model lives and the work one task does."""
