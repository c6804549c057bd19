"""The `tandem` command line (an entry point): one group (`root`), one file per command family,
and `main` that registers them all.

May import: every `bot` package below the entry points, `modules` and `tools`.
"""
