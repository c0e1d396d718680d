"""Fix builders: each turns one finding into a rewritten module (LibCST, comments kept)."""
