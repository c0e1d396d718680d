"""Batch inference over image shards with a Keras classifier, parallelised with multiprocessing.

Written the way it often is: the parent loads the model to check it, then forks a pool whose
task function loads the model again for every shard.
"""
import argparse
import multiprocessing as mp

import numpy as np
import tensorflow as tf

MODEL_PATH = "classifier.keras"


def classify(shard):
    model = tf.keras.models.load_model(MODEL_PATH)
    return model.predict(shard, verbose=0).argmax(axis=1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", default="images.npy")
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    model = tf.keras.models.load_model(MODEL_PATH)
    model.predict(np.zeros((1, 32, 32, 3), dtype="float32"), verbose=0)  # sanity check

    shards = np.array_split(np.load(args.images), args.workers * 4)
    with mp.Pool(args.workers) as pool:
        labels = np.concatenate(pool.map(classify, shards))
    print(np.bincount(labels))


if __name__ == "__main__":
    main()
