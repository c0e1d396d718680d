"""An augmentation package that leaves the start method to the program that imports it: it keeps a
context of its own, which changes nothing for anyone else."""
import multiprocessing

CONTEXT = multiprocessing.get_context("fork")
