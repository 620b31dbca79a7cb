"""The senses: each channel receives stimuli, delivers outbox rows, or both."""
