"""Issue 30, class 3 (Ray): one Keras model handed to many Ray tasks, each of which unpickles (loads)
its own copy (TFP102; analysis/engines/ray_refs.py)."""

from __future__ import annotations

import textwrap

from tfproc_lint.config import Config
from tfproc_lint.engine import lint_source


def findings(source: str) -> list[tuple[int, str]]:
    return sorted((d.line, d.code) for d in lint_source(textwrap.dedent(source), "example.py", Config()))


def messages(source: str) -> list[str]:
    return [d.message for d in lint_source(textwrap.dedent(source), "example.py", Config())]


RAY_REFS = """\
    import numpy as np
    import ray
    import tensorflow as tf

    @ray.remote
    def predict(model, rows):
        return model.predict_on_batch(rows)

    @ray.remote
    def make():
        return tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])

    if __name__ == "__main__":
        model = tf.keras.models.load_model("m.keras")
        batches = np.zeros((8, 2, 4))
        {send}
    """


def test_a_keras_model_handed_to_many_ray_tasks() -> None:
    for send, how in (("ref = ray.put(model)\n        ray.get([predict.remote(ref, b) for b in batches])", "ray.put"),
                      ("ref = make.remote()\n        ray.get([predict.remote(ref, b) for b in batches])", "ObjectRef"),
                      ("ray.get([predict.remote(model, b) for b in batches])", "a Keras model")):
        source = RAY_REFS.format(send=send)
        assert findings(source) == [(16 + send.count("\n"), "TFP102")], send
        message = messages(source)[0]
        assert how in message and "each task unpickles its own copy" in message, message


def test_a_model_ref_sent_once_or_to_actor_constructors_is_not_reported() -> None:
    for send in ("ref = ray.put(model)\n        ray.get(predict.remote(ref, batches[0]))",
                 "ref = ray.put(model.get_weights())\n        ray.get([predict.remote(ref, b) for b in batches])",
                 "ref = ray.put(batches)\n        ray.get([predict.remote(ref, b) for b in batches])"):
        assert findings(RAY_REFS.format(send=send)) == [], send
