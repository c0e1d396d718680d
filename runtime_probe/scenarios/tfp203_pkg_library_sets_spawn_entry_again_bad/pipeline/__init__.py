"""A preprocessing package."""
