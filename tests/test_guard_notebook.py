"""The runtime guard as an IPython extension, in a real Jupyter kernel (nbclient + ipykernel): a
fork pool after a cell used TensorFlow fails with TFP201 in the cell that forks, instead of hanging."""

from __future__ import annotations

import pytest

import processes

pytestmark = [pytest.mark.kernel, pytest.mark.tensorflow]
nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("tensorflow")

CELLS = [
    "%load_ext tfproc_lint.guard",
    "import multiprocessing as mp\nimport numpy as np\nimport tensorflow as tf\n"
    "print('parent', float(tf.reduce_sum(tf.constant([1.0, 2.0]))))",
    "def numpy_sum(seed):\n    return float(np.ones((4, 4)).sum())\n\n"
    "with mp.get_context('fork').Pool(2) as pool:\n    print('numpy', pool.map(numpy_sum, [1, 2]))",
    "def tf_sum(seed):\n    m = tf.constant(np.ones((256, 256), dtype=np.float32))\n"
    "    return float(tf.reduce_sum(tf.matmul(m, m)))\n\n"
    "with mp.get_context('fork').Pool(2) as pool:\n    print(pool.map_async(tf_sum, [1, 2]).get(240))",
]


def test_load_ext_in_a_kernel_turns_the_fork_hang_into_tfp201(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(notebook, timeout=300, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(tmp_path)}})
    with processes.ended():  # the kernel and its pool's workers, whatever happens
        client.execute()
    outputs = [cell.outputs for cell in notebook.cells]
    text = ["".join(o.get("text", "") for o in cell_outputs) for cell_outputs in outputs]
    assert "tfproc-guard installed" in text[0]
    assert "parent 3.0" in text[1]
    assert "numpy [16.0, 16.0]" in text[2]  # a child that runs no TensorFlow is fine
    errors = [o for o in outputs[3] if o.output_type == "error"]
    assert errors, outputs[3]
    assert errors[0].ename == "ForkAfterStartError"
    assert errors[0].evalue.startswith("TFP201: an op ran in process")
    assert "<ipython-input-" in errors[0].evalue or "/tmp/ipykernel_" in errors[0].evalue  # the cell that started it
