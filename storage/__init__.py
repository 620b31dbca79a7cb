"""Working memory (peewee models and migrations) and long-term memory (engram)."""
