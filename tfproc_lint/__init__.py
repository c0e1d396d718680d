"""tfproc-lint: find TensorFlow runtime state crossing process boundaries."""

__version__ = "0.1.0"
