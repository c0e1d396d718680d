"""The nightly scoring package: a pool in one module, the matrices its workers multiply in another."""
