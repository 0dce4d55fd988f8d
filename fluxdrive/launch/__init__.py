"""Phase 2, launch (PROTOCOL.md section 4): from an approved triage to agent reports on disk.

Content routing and prompts prepare each agent's task; the dispatcher runs a
stage through the runtimes, the monitor registers completions as they
happen, research runs between the stages, and dropout and expansion decide
whether Stage 2 runs. :mod:`fluxdrive.launch.plan` and :mod:`fluxdrive.launch.execute` join them with triage
and synthesis into one review.
"""
