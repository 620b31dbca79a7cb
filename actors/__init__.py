"""The brain, one module per organ."""
