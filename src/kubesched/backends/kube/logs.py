"""Structured logs for ``kubesched run``: klog's text form
(``I1129 17:21:14.123456 kubesched] "Successfully bound pod to node" pod="default/web-1"``)
or one JSON object a line (``--log-format json``, like kube-scheduler's ``--logging-format
json``). Key/value pairs come from a log call's ``extra={"kv": {...}}``."""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from typing import Any

_LEVEL_LETTER = {logging.DEBUG: "D", logging.INFO: "I", logging.WARNING: "W",
                 logging.ERROR: "E", logging.CRITICAL: "F"}


def _quote(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    return json.dumps(v if isinstance(v, str) else str(v))


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        t = dt.datetime.fromtimestamp(record.created)
        head = (f"{_LEVEL_LETTER.get(record.levelno, 'I')}{t:%m%d %H:%M:%S.%f} "
                f"{record.name}]")
        msg = record.getMessage()
        parts = [head, json.dumps(msg)]
        kv = getattr(record, "kv", None)
        if kv:
            parts.extend(f"{k}={_quote(v)}" for k, v in kv.items())
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 6),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        kv = getattr(record, "kv", None)
        if kv:
            for k, v in kv.items():
                out.setdefault(k, v)
        if record.exc_info:
            out["err"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def setup(fmt: str = "text", level: int = logging.INFO, stream: Any = None) -> None:
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler._kubesched = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for h in list(root.handlers):  # ours from an earlier call only (not a test harness's)
        if getattr(h, "_kubesched", False):
            root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level)
    # the transport's own retry chatter is not ours
    logging.getLogger("urllib3").setLevel(logging.ERROR)
    logging.getLogger("kubernetes").setLevel(logging.WARNING)
