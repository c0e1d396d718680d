"""A planning package: the policy network in one module, the planner that holds it in another."""
