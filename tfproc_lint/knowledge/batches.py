"""One item run as a batch of one (TFP303): the model calls that take a batch, and the ways
code makes a batch of one row.

Names are canonical (analysis/names.py: `tf.compat.v1.Session` -> `tensorflow.Session`,
`tf.keras.models.load_model` -> `keras.models.load_model`, `multiprocess.Pool` -> `multiprocessing.Pool`).
"""

from __future__ import annotations

# --- One item as a batch of one (TFP303) ------------------------------------------------------------
# Model methods that run the model on the batch given as their first argument.
MODEL_BATCH_METHODS = frozenset({"predict", "predict_on_batch"})
# `np.expand_dims(x, 0)`; `x[np.newaxis]` (newaxis is None: read by name); `np.array([x])`.
EXPAND_DIMS = frozenset({"numpy.expand_dims", "tensorflow.expand_dims"})
NEW_AXIS = frozenset({"numpy.newaxis", "tensorflow.newaxis"})
ARRAYS_FROM_LISTS = frozenset({"numpy.array", "numpy.asarray", "numpy.stack", "numpy.vstack", "tensorflow.constant",
                               "tensorflow.convert_to_tensor", "tensorflow.stack"})
# Conversions that leave an item an in-memory row (dtype, shape, copy). Anything else between the
# task's argument and the model (reading a file, decoding an image) makes each task more than a row.
ROW_CONVERSIONS = frozenset({"numpy.asarray", "numpy.array", "numpy.float32", "numpy.ravel", "numpy.reshape",
                             "tensorflow.cast", "tensorflow.constant", "tensorflow.convert_to_tensor",
                             "tensorflow.reshape"})
ROW_METHODS = frozenset({"astype", "reshape", "flatten", "ravel", "copy", "squeeze"})
# Builtins that keep the elements of what they are given: `for i, row in enumerate(rows)` still
# walks the partition's rows (TFP303's loop over rows inside an engine task). Builtins by their bare
# name, taken only where the module does not bind it.
ROW_ITERATIONS = frozenset({"enumerate", "zip", "iter", "list", "tuple"})
