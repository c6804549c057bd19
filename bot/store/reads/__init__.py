"""Named reads: one function per purpose, each the store's statements for one question."""
