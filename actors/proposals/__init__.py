"""Proposals: the only code that writes Approval and ApprovalItem rows (tests/test_architecture.py checks it).

A proposal is the user's consent in waiting, so every change to its rows is one of a few transitions,
each here and each in one transaction: made (`propose` for a run, replacing the proposal a modification
asked to change; `propose_one` for a command of the user's; `copy_proposal` to ask again), shown once
(`present`), its message noted (`record_message_ref`), decided (`approve`, `reject`, `modify`, `revive`,
`refuse`), undone by a new proposal that puts back what it changed (`undo`), reminded of once and expired
with one notice (`remind`, `expire`), and put back to be shown alone when the briefing it was kept for did
not tell it (`release_kept`).

The gate (actors/approval.py) runs these from its messages and delivers what they wrote; channels read
through the pure parts: `check` (whether a decision can be taken), `may_decide`, `render` and the other
words in `words.py`. Nothing here tells an actor: a caller does, after the transaction commits.

  rules.py    what is true of a proposal, read from its rows (pure)
  words.py    a proposal in words (pure)
  make.py     making, superseding, copying and showing proposals
  decide.py   approving, rejecting, modifying, reviving, and refusing an answer
  lapse.py    the one reminder and the one notice of expiry
  undo.py     the proposal that undoes an approved one, from what its items recorded
"""
