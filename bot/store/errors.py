"""The store's failures, named for callers above it that turn them into messages or retries.

SQLAlchemy's exception classes, under the store's names, so that an entry point can catch "the
database failed" without importing the database library (the import-linter contract keeps it
in the store).
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError, SQLAlchemyError

# Anything the database or its library raised.
StorageError = SQLAlchemyError
# An error the driver raised (carries `orig` and `connection_invalidated`).
DriverError = DBAPIError
# The server refused or lost the connection, timed out, or is locked (SQLite "database is locked").
DatabaseUnavailable = OperationalError
# A unique or other constraint refused a write.
ConstraintRefused = IntegrityError

__all__ = ["ConstraintRefused", "DatabaseUnavailable", "DriverError", "StorageError"]
