"""An augmentation package that picks the start method for its users when it is imported."""
import multiprocessing

multiprocessing.set_start_method("fork")
