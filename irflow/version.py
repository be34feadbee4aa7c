"""irflow's version, in a module of its own that imports nothing: every layer may
read it (the LLVM backend keys its on-disk kernel cache by it) without importing the
package, and without `importlib.metadata`, whose import took 10 ms of a compile."""
__version__ = "0.1.0"
