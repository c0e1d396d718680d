"""The kinds of object the analysis tells apart, and the groups the rules ask about."""

from __future__ import annotations

from tfproc_lint.knowledge.kinds import Kind


TF1_STATE = frozenset({Kind.SESSION, Kind.GRAPH})
TF2_STATE = frozenset({Kind.TF_FUNCTION, Kind.DATASET, Kind.SAVED_MODEL, Kind.KERAS_MODEL})
STATE = TF1_STATE | TF2_STATE
PROCESS_OWNERS = frozenset({Kind.POOL, Kind.EXECUTOR, Kind.PROCESS, Kind.PARALLEL})

STATE_NOUNS = {
    Kind.SESSION: "TensorFlow session",
    Kind.GRAPH: "TF1 graph object",
    Kind.TF_FUNCTION: "tf.function",
    Kind.DATASET: "tf.data.Dataset",
    Kind.SAVED_MODEL: "loaded SavedModel",
    Kind.KERAS_MODEL: "Keras model",
}
