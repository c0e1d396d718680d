"""A scoring package: the products in one module, the worker process that runs them in another."""
