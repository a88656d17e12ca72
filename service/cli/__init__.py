"""CLI face: the `memory` command (typer). Commands build what they need through service.container and
call the application; errors become one line (or a JSON error object, as service.error_bodies describes
them) and exit code 1."""
