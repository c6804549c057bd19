"""`tandem chat`'s sandbox: one participant and the whole engine in process (see session.py);
and simulated participants, many personas on the same engine (cohort.py).

An entry point: may import every `bot` package below it, `modules` and `tools`.
"""
