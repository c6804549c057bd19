"""`tandem chat`'s sandbox: one participant and the whole engine in process (see session.py).

An entry point: may import every `bot` package below it, `modules` and `tools`.
"""
