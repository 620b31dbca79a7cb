"""The cortex: claims inbox rows by priority and reasons over them with the deep model.

A run assembles context (the stimulus, recent turns, open topics and tasks,
memories, the time in the user's timezone), calls the `deep` role with tools and
loops over tool calls until the model is done. What it decided then becomes rows:
a reply to the user (only for runs the user started), a proposal for the
approval gate (every mutation), surfaced messages (only through `surface`), or a
record of silence. The cortex never branches on the channel a stimulus came from.

Two lanes share the same code: the realtime lane only claims priority 0 (the
user's messages) so that a long background run never makes the user wait.

Text others wrote (calendars, mail, web pages, feeds) reaches the model only in a
labelled untrusted block, and reaches the user only with its source named and the
links a stranger planted defanged. Each person's run sees their own conversation
(and a topic thread's, which is shared) and its proposals are theirs to decide.

The package, along its seams: `prompts` (what the model is told, and the run's fallback words),
`route` (fast or deep, and template follow-ups), `context` (what a run sees), `calls` (the loop with the
model and what each tool call becomes), `outcome` (writing down what was decided) and `actor`.
"""
