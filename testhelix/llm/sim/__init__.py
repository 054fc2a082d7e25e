"""Simulated models (`sim:strong`, `sim:weak`, and any profile you register): offline test doubles
at the provider boundary that play every role through the same protocol and tools as a real model.

What they see. Exactly what a provider receives: the messages (with tool results) and the tools.
The role is read from the system message, never from host-side tags. Their private knowledge is
the task's simulation bank -- a pool of candidate tests and candidate repairs whose labels were
measured by running the bank's tests on the initial program and on the bank's own repairs only
(tasks/README.md). They never read the reference, the panel or the trusted tests, and no label
they act on was measured on them (tests/helix/test_information_flow.py checks this with decoys).

What they do (agent.py). A session writes one reproducing test plus guards, a repair the own runs
support best (with probability `repair_skill`), runs the suite on both programs and fixes what the
runs show; feedback drops tests the runs do not back, a differential challenge adds a test on which
candidate repairs differ. The reviewer (model.py) flags a test when its text looks incidental
(matches an error message, compares a repr or an exact error stream, reaches into a private name)
or the reviewer's own runs contradict it, and otherwise only at its seeded error rate. Requests of
other packages (AutoSaddler's optimizer sessions) are answered by the simulated roles those packages
contribute through the `testhelix.simulated_roles` entry points (contributed.py); the simulated
optimizer itself lives in autosaddler/sim_optimizer.py.

What strategy text they react to (cues.py). Only these phrases, found in the guidance, in a
rendered lesson's Do/Verify lines, or in the heading of a routed skill that lists the task's
context: *reproduce / bug report / exact scenario / expected value* (more reproducing test picks),
*verify / run the suite / both programs / passes on the repair / fails on the initial* (better
diagnosis, more often the best-supported repair), *boundary / edge case / neighbour / regression*
(one more guard per suite), *minimal / specification fixes / spec over / only what* (one guard
fewer, no incidental-looking guards, a sharper reviewer), *error message / exact text / exact
message* (incidental-looking guards preferred). Numeric fields act through the loop (steps,
context, rounds). An offline search can discover only these; everything else in a strategy is
invisible to a simulated model.

No option of a simulated model plants an effect. The planted effect of bench/validity.py is a
declared test fixture outside this package (bench/validity_fixture.py): it rewrites the outcome of
a few chosen tasks after a real evaluation, keyed on whether the `check` cue above reaches the
task's prompt; nothing else (the demo, the commands) turns it on.

See profiles.py (how to define another one), model.py (roles, usage, the `simulated` flag).
"""
