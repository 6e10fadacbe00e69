"""The one error type for bad input: a file, object or field the user must fix; and the
one check that an optional dependency is installed."""

from __future__ import annotations

import importlib
import os
from pathlib import Path


class InputError(Exception):
    """Bad input: names the file, the object (kind, namespace/name), the field path and the value.

    The CLI prints ``str(err)`` as one line and exits with status 2.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        obj: str | None = None,
        field: str | None = None,
        value: object = None,
    ) -> None:
        self.message = message
        self.file = file
        self.obj = obj
        self.field = field
        self.value = value
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.obj:
            where.append(self.obj)
        if self.field:
            where.append(f"field {self.field}")
        head = ": ".join(where)
        text = self.message
        if self.value is not None:
            text += f" (value: {self.value!r})"
        return f"{head}: {text}" if head else text

    def located(self, *, file: str | None = None, obj: str | None = None,
                field_prefix: str | None = None) -> InputError:
        """The same error with more location filled in (outer layers know the file/object)."""
        fld = self.field
        if field_prefix:
            fld = f"{field_prefix}.{fld}" if fld else field_prefix
        return InputError(self.message, file=self.file or file, obj=self.obj or obj,
                          field=fld, value=self.value)


_debug = False


def debug() -> bool:
    """Whether tracebacks are shown (``--debug``, or ``KUBESCHED_DEBUG=1``)."""
    return _debug or bool(os.environ.get("KUBESCHED_DEBUG"))


def set_debug(on: bool) -> None:
    global _debug
    _debug = on


def check_output_path(path: str | None, option: str, *, directory: bool = False) -> None:
    """Refuse an output path that cannot be written, before any work is done (a long run's
    results must not be lost at its end). ``-`` is stdout."""
    if path is None or path == "-":
        return
    target = Path(path)
    why = ""
    if target.exists():
        if directory != target.is_dir():
            why = "is not a directory" if directory else "is a directory, not a file"
        elif not os.access(target, os.W_OK):
            why = "is not writable"
    elif not target.parent.is_dir():  # (a new --profile directory is made in an existing one)
        why = f"directory {str(target.parent)!r} does not exist"
    elif not os.access(target.parent, os.W_OK):
        why = f"directory {str(target.parent)!r} is not writable"
    if why:
        raise InputError(f"{option} {path}: {why}")


class MissingExtra(InputError):
    """A command or option needs a library that only one of kubesched's extras installs."""


def require_extra(extra: str, needed_by: str, *modules: str) -> None:
    """Import ``modules``, the libraries that ``needed_by`` (a command or an option) uses
    and that ``pip install 'kubesched[extra]'`` installs; one that cannot be imported
    raises MissingExtra, which the CLI prints as one line, exiting 2. A command calls this
    before any work, then imports the libraries where it uses them."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            raise MissingExtra(f"{needed_by} needs {name}, which is not installed: "
                               f"pip install 'kubesched[{extra}]'") from None
