"""What several organs share, below all of them: task windows on dates, cron expressions and the schedule
rows the toolbox writes. Nothing here imports an organ (.importlinter keeps it so)."""
