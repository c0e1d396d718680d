"""A ranking package: the model in one module, the task its workers run in another."""
