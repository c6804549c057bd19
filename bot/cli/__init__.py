"""The `tandem` command line (an entry point): one group (`root`), one file per command family,
the table of commands the group imports a family from when one of its commands is used
(`commands`), and `main`, the console script's target.

May import: every `bot` package below the entry points, `modules` and `tools`.
"""
