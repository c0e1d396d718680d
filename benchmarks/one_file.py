"""A typical small script with one finding (TFP201), for the single-file latency of
benchmarks/lint_speed.py: a parent that predicts once, then forks a pool of TensorFlow workers."""
import argparse
import multiprocessing as mp

import numpy as np
import tensorflow as tf

MODEL_PATH = "ranker.keras"
_model = None


def load_model():
    global _model
    _model = tf.keras.models.load_model(MODEL_PATH)


def score(rows):
    return _model.predict(np.asarray(rows), verbose=0).ravel().tolist()


def check_model():
    model = tf.keras.models.load_model(MODEL_PATH)
    probe = np.zeros((1, model.input_shape[-1]), np.float32)
    print("model output:", model.predict(probe, verbose=0).shape)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("rows")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    check_model()
    rows = np.load(args.rows)
    batches = np.array_split(rows, 64)
    with mp.Pool(args.workers, initializer=load_model) as pool:
        scores = pool.map(score, batches)
    np.save("scores.npy", np.concatenate(scores))
    print(len(rows), "rows scored")


if __name__ == "__main__":
    main()
