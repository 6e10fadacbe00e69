"""The one error type for bad input: a file, object or field the user must fix."""

from __future__ import annotations


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
