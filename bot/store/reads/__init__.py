"""Named reads: one query per purpose an entry point has, so that entry points run none."""
