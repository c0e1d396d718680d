"""The planner holds the policy: making a planner builds the network (planner.policy) in the
dataclass's `__post_init__`."""
from dataclasses import dataclass

from planner.policy import PolicyNet


@dataclass
class Planner:
    horizon: int = 2

    def __post_init__(self):
        self.policy = PolicyNet()
