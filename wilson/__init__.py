"""Wilson: a proactive assistant with one brain, one memory and many senses."""

__version__ = "0.1.0"
