"""The hippocampus, on its way to a package: its code moved to episodes.py first, whole, so that
history follows the biggest part; the split along its seams comes next."""

from actors.hippocampus import episodes as _whole

globals().update({name: value for name, value in vars(_whole).items() if not name.startswith("__")})
