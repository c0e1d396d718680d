"""A3C-style actors (TF1): the learner hands its session to each actor process."""
import multiprocessing as mp

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()


def build_policy(obs_dim=8, n_actions=4):
    obs = tf.placeholder(tf.float32, [None, obs_dim], name="obs")
    hidden = tf.layers.dense(obs, 64, activation=tf.nn.relu)
    return obs, tf.nn.softmax(tf.layers.dense(hidden, n_actions), name="pi")


def actor(actor_id, sess, rollouts):
    rng = np.random.default_rng(actor_id)
    for _ in range(100):
        observation = rng.standard_normal((1, 8)).astype(np.float32)
        rollouts.put((actor_id, sess.run("pi:0", {"obs:0": observation})))


def main():
    build_policy()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    rollouts = mp.Queue()
    actors = [mp.Process(target=actor, args=(i, sess, rollouts)) for i in range(4)]
    for process in actors:
        process.start()
    for _ in range(400):
        print(rollouts.get()[0], end=" ")


if __name__ == "__main__":
    main()
