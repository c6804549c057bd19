"""`tandem chat`'s sandbox: one participant and the whole engine in process (see session.py);
and simulated participants, many personas on the same engine (cohort.py).

An entry point: may import every `bot` package below it, `modules` and `tools`.
"""

# The participant's phone when `tandem chat --phone` is not given (here, so that the command's
# options are built without importing the engine).
DEFAULT_PHONE = "+15550100"
