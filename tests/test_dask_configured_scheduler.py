"""A Dask `Client()` given no address connects to the scheduler that Dask's `scheduler-address`
setting names (distributed/client.py); in a module that names that setting it starts no local
cluster, so TFP202 stays silent there (found reviewing a Kubernetes Dask script, issue 30)."""

from __future__ import annotations

import pytest

from tfproc_lint.config import Config
from tfproc_lint.engine import lint_source

SCRIPT = """\
import dask
import tensorflow as tf
from dask.distributed import Client
{setting}
client = Client()
print(client.submit(tf.reduce_sum, [1.0, 2.0]).result())
"""


def findings(source: str) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_source(source, "example.py", Config()))


@pytest.mark.parametrize("setting", [
    'address = dask.config.get("scheduler-address")',
    "from dask.distributed import config\nconfig['scheduler-address']",
    'dask.config.set({"scheduler-address": "tcp://scheduler:8786"})',
    'dask.config.set(scheduler_address="tcp://scheduler:8786")',
    'import os\nos.environ["DASK_SCHEDULER_ADDRESS"] = "tcp://scheduler:8786"',
])
def test_client_without_address_connects_to_the_configured_scheduler(setting: str) -> None:
    assert findings(SCRIPT.format(setting=setting)) == []


def test_client_without_address_and_no_configured_scheduler_starts_a_cluster() -> None:
    source = SCRIPT.format(setting="cluster_name = 'scheduler address unset'")
    assert findings(source) == [(5, "TFP202")]
