"""The tests keep compiled modules (in the __pycache__ folders git ignores) even where PYTHONDONTWRITEBYTECODE is set.
Else every test worker compiles and assertion-rewrites each test module again, about 10 s of CPU per worker. Every
Wilson a test starts would also compile the project anew, about 0.35 s of CPU each, a few hundred times a run.
This package is imported before any test module and before conftest.py's own imports."""

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
