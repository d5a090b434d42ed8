"""Readers of the traces and logs other training jobs write (issue 25): the file side of an
import. The parsing itself is pure and lives in app.core.traces."""
