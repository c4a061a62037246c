# SPDX-License-Identifier: Apache-2.0
"""keyshift: rehearse a Kafka partition increase on the traffic your
producer really sends.

keyshift is a librdkafka plugin: loaded into a producer, it places every
message as the producer's partitioner does, under the topic's current
partition count and under proposed counts, and writes a JSON report of
what an increase would move. This package carries the plugin for
confluent-kafka-python (2.0.2 and newer: the plugin binds to the
librdkafka that the client brings) and the ``keyshift`` command::

    from confluent_kafka import Producer
    import keyshift

    producer = Producer({
        "bootstrap.servers": "broker:9092",
        "plugin.library.paths": keyshift.PLUGIN,
        **keyshift.config(proposed=[12, 24]),
    })
    ...
    producer.flush()
    producer.close()   # or `del producer`: the final report is written

The report goes to ``keyshift-<client.id>-<pid>.json`` in the working
directory (``report_path=``), every 60 s (``report_interval_ms=``) and
when the producer is destroyed (never at ``flush()``);
``keyshift show REPORT.json`` summarises it and ``keyshift html
REPORT.json -o page.html`` draws it. The plugin never fails, delays or
modifies a message.

Thread safety: everything here may be called from any thread.
"""

from __future__ import annotations

import difflib
import functools
import json
import math
import os
import subprocess
from collections import abc
from typing import Any, Dict, Iterable, List, Optional, Union

__all__ = ["PLUGIN", "COMMAND", "ConfigError", "config", "properties",
           "__version__"]

_HERE = os.path.dirname(os.path.abspath(__file__))

#: Absolute path of the plugin, ``libkeyshift.so``, for the producer's
#: ``"plugin.library.paths"`` (join it with ``;`` to other plugins).
PLUGIN: str = os.path.join(_HERE, "libkeyshift.so")

#: Absolute path of the ``keyshift`` command that the console script runs.
COMMAND: str = os.path.join(_HERE, "bin", "keyshift")


def _version() -> str:
    try:
        from importlib.metadata import version
        return version("keyshift")
    except Exception:  # not installed as a distribution (a source tree)
        return "unknown"


#: The package's version: CMakeLists.txt's project(keyshift VERSION ...).
__version__: str = _version()

_PREFIX = "keyshift."

#: A value keyshift.config() turns into a property's text.
Value = Union[str, int, float, bool, "os.PathLike[str]", Iterable[int]]


class ConfigError(ValueError):
    """A keyshift property that the plugin would refuse, or could not be
    given: an unknown name, a value of the wrong kind or out of range.

    Attributes:
        property: the property's full name, e.g. ``"keyshift.hot.keys"``.
        value: the value given (as passed to :func:`config`).
        errors: every refusal, as ``(property, message)`` pairs, when the
            plugin refused more than one.

    ``str(error)`` names the property and says what it accepts, in the
    plugin's own words where the plugin judged it.
    """

    def __init__(self, prop: str, value: Any, message: str,
                 errors: Optional[List[tuple]] = None) -> None:
        super().__init__(message)
        self.property = prop
        self.value = value
        self.errors = errors or [(prop, message)]


def _run(args: List[str]) -> Dict[str, Any]:
    """Runs ``keyshift config --json ARGS`` and returns its JSON object.

    Raises RuntimeError when the command cannot run or says nothing
    readable (a broken installation, not a bad property)."""
    try:
        r = subprocess.run([COMMAND, "config", "--json"] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           check=False)
    except OSError as e:
        raise RuntimeError("keyshift: cannot run %s: %s" % (COMMAND, e)) from e
    try:
        return json.loads(r.stdout.decode("utf-8"))
    except ValueError:
        raise RuntimeError("keyshift: %s config failed (exit %d): %s"
                           % (COMMAND, r.returncode,
                              r.stderr.decode("utf-8", "replace").strip()))


@functools.lru_cache(maxsize=1)
def _properties() -> Dict[str, str]:
    return {p["name"]: p["accepted"] for p in _run([])["properties"]}


def properties() -> Dict[str, str]:
    """Every ``keyshift.*`` property the plugin accepts, from the plugin's
    own list (``keyshift config``), in its order.

    Returns:
        ``{name: what it accepts}``, e.g. ``{"keyshift.hot.keys": "0..1000
        hot keys per topic", ...}``. A copy: changing it changes nothing.
    """
    return dict(_properties())


def _keyword(prop: str) -> str:
    """``keyshift.report.interval.ms`` -> ``report_interval_ms``."""
    return prop[len(_PREFIX):].replace(".", "_")


def _property(name: str) -> str:
    """A keyword or a full name -> the property's full name."""
    if name.startswith(_PREFIX):
        return name
    return _PREFIX + name.replace("_", ".")


def _text(prop: str, keyword: str, value: Any) -> str:
    """A Python value -> the property's text, as librdkafka takes it;
    ConfigError (naming @p keyword and @p prop) for a kind it cannot be."""
    where = "keyshift.config(): %s=: %s" % (keyword, prop)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ConfigError(prop, value, "%s: %r is not a finite number"
                              % (where, value))
        return repr(value)
    if isinstance(value, (str, os.PathLike)):
        text = os.fsdecode(os.fspath(value))
    elif prop == _PREFIX + "partitions.proposed" and \
            isinstance(value, abc.Iterable) and not isinstance(value, bytes):
        counts = list(value)
        for c in counts:
            if isinstance(c, bool) or not isinstance(c, int):
                raise ConfigError(prop, value,
                                  "%s: partition counts are integers, "
                                  "got %r" % (where, c))
        text = ",".join(str(c) for c in counts)
    else:
        raise ConfigError(prop, value, "%s: a %s is not a value keyshift "
                          "takes (a string, number, boolean%s)"
                          % (where, type(value).__name__,
                             ", or a list of partition counts"
                             if prop.endswith(".partitions.proposed") else ""))
    if "\0" in text:
        raise ConfigError(prop, value, "%s: a NUL character in %r"
                          % (where, text))
    return text


def _unknown(prop: str, given: str, known: Dict[str, str]) -> ConfigError:
    like = difflib.get_close_matches(prop, list(known), n=1, cutoff=0.8)
    hint = (" did you mean %s (%s=)?" % (like[0], _keyword(like[0]))
            if like else "")
    return ConfigError(
        prop, given,
        "keyshift.config(): unknown property %s (from %s=).%s keyshift's "
        "properties, as keywords: %s"
        % (prop, given, hint,
           ", ".join(_keyword(p) for p in known)))


def config(proposed: Optional[Union[int, str, Iterable[int]]] = None,
           report_path: Optional[Union[str, "os.PathLike[str]"]] = None,
           **more: Value) -> Dict[str, str]:
    """The ``keyshift.*`` properties to merge into a Producer's
    configuration, checked by the plugin's own parser first.

    Args:
        proposed: the partition counts to rehearse (``keyshift.partitions.
            proposed``), one to 8 of 1..100000, e.g. ``[12, 24]``; None:
            twice each topic's current count.
        report_path: the report's file (``keyshift.report.path``), a
            template: ``%c`` client.id, ``%p`` pid; its folder must exist.
            None: ``keyshift-%c-%p.json`` in the working directory.
        **more: any other property, named by its name without
            ``keyshift.`` and with ``_`` for ``.`` (``report_interval_ms=1000``
            for ``keyshift.report.interval.ms``, ``partitions_current=6``,
            ``consumer_msgs_per_s=4000``, ``consumers_max=12``,
            ``metrics_path=...``, ``hot_keys=50``, ``topics="^orders$"``,
            ``enable=False``), or by its full name
            (``**{"keyshift.hot.keys": 50}``). :func:`properties` lists them
            all; docs/properties.md explains them. A None value is left
            out.

    Values: a string as is; an int or float as its decimal text; a bool
    as ``true``/``false``; a path; for ``proposed``, a list of ints.

    Returns:
        ``{"keyshift.partitions.proposed": "12,24", ...}``: strings, as
        librdkafka takes them. Add ``"plugin.library.paths":
        keyshift.PLUGIN`` beside them.

    Raises:
        ConfigError: (a ValueError) for an unknown property (with the
            closest one and the list of valid ones), a value of a kind
            keyshift does not take, or a value the plugin refuses (the
            plugin's message: the property and what it accepts). Its
            ``property`` attribute is the property's full name.
        RuntimeError: when the bundled ``keyshift`` command cannot run
            (a broken installation).

    The check runs the bundled ``keyshift config`` (a few milliseconds); a
    path template is checked from the current directory, as the producer
    will check it.
    """
    given: Dict[str, str] = {}  # property -> the keyword it came from
    values: Dict[str, Any] = {}

    def add(prop: str, keyword: str, value: Any) -> None:
        if value is None:
            return
        if prop in values:
            raise ConfigError(prop, value,
                              "keyshift.config(): %s given twice (%s= and "
                              "%s=)" % (prop, given[prop], keyword))
        given[prop] = keyword
        values[prop] = value

    add(_PREFIX + "partitions.proposed", "proposed", proposed)
    add(_PREFIX + "report.path", "report_path", report_path)
    for name, value in more.items():
        add(_property(name), name, value)

    known = _properties()
    for prop in values:
        # keyshift.report.topic.<X>: a librdkafka property of the report
        # producer, any X (the plugin checks it with librdkafka)
        if prop not in known and not (
                prop.startswith(_PREFIX + "report.topic.") and
                len(prop) > len(_PREFIX + "report.topic.")):
            raise _unknown(prop, given[prop], known)
    texts = {prop: _text(prop, given[prop], value)
             for prop, value in values.items()}
    if not texts:
        return {}
    verdict = _run(["%s=%s" % (p, t) for p, t in texts.items()])
    refused = verdict.get("refused") or []
    if refused:
        first = refused[0]
        prop = first["property"]
        raise ConfigError(prop, values.get(prop), "keyshift.config(): %s=: %s"
                          % (given.get(prop, prop), first["error"]),
                          [(r["property"], r["error"]) for r in refused])
    return texts
