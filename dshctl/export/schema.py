"""The export tables, derived from the stats record Structs: one declaration of every column.

Each table is a record type of :mod:`dshctl.stats.records` plus the keys every row carries for joins.
Its columns are that record's fields, in declaration order, named as the fields are (snake_case) and
typed from their annotations:

* ``int`` → ``BIGINT`` (Parquet INT64); ``float`` and dsh's JavaScript numbers (``int | float``) →
  ``DOUBLE``; ``str`` → ``VARCHAR``; ``bool`` → ``BOOLEAN``; a list → a ``LIST`` of its element;
* epoch-millisecond times (:data:`TIMESTAMPS`) → ``TIMESTAMP WITH TIME ZONE`` (Parquet TIMESTAMP,
  microseconds, adjusted to UTC); durations stay integer milliseconds (``*_ms``);
* a nested record is flattened, its fields prefixed by the field's name (``dshctl.providerTtftMs.p50`` →
  ``dshctl_provider_ttft_ms_p50``); a list of records is a ``LIST`` of ``STRUCT``;
* a :class:`~dshctl.stats.records.CostRecord` is :func:`cost_columns`: each amount a ``DECIMAL(38,9)``
  (exact nano-units, from the fold's integers) and its currency.

A column is nullable exactly where the field is (``X | None``, or inside a nullable record); the
Parquet file marks every column OPTIONAL, the schema page says which are never null. Columns are only
ever added or widened (:data:`SCHEMA_VERSION` counts the changes: 2 widened the cost amounts from
``DECIMAL(18,9)``, which held less than a billion, to ``DECIMAL(38,9)``; 3 added the sessions'
``in_plus_out_tokens``), never renamed. ``docs/schema.md`` is
:func:`markdown` (a test keeps them equal).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import msgspec
from msgspec import inspect as mi

from ..stats import records as R

SCHEMA_VERSION = 3
SCHEMA = f"dshctl-export/{SCHEMA_VERSION}"
"""Written in every Parquet file's key-value metadata (``dshctl.schema``)."""

TIMESTAMPS = frozenset({"created_at", "start_time", "step_started_at", "requested_at", "settled_at", "called_at", "result_at"})
"""Fields holding an epoch-millisecond moment (everything else ending in ``_ms`` is a duration)."""

DECIMAL = "DECIMAL(38,9)"
"""Every cost amount: 29 digits of whole units, nine of nano-units (a sum of INT64 nano-units fits)."""
NANO = 10**9


class Column(msgspec.Struct, frozen=True):
    """One column: its name, DuckDB type, whether it can be null, and the stats JSON key it comes from."""

    name: str
    type: str
    nullable: bool
    source: str
    get: Any = None
    """record → the value as spooled (JSON), or None."""

    @property
    def spool_type(self) -> str:
        """The type of the spooled JSON value (a time is spooled as epoch ms)."""
        return _spool_type(self.type)


def _spool_type(sql: str) -> str:
    return sql.replace("TIMESTAMPTZ", "BIGINT")


def select_expression(column: Column) -> str:
    """How the Parquet column is made from its spooled value."""
    name = quote(column.name)
    if column.type == "TIMESTAMPTZ":
        return f"make_timestamptz({name} * 1000) AS {name}"  # epoch ms → µs, UTC
    return name


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# -- costs ---------------------------------------------------------------------------------------------

COST_PARTS = (("input", "input"), ("cache_read", "cacheRead"), ("cache_write", "cacheWrite"), ("output", "output"), ("total", "total"))


def cost_columns(prefix: str, source: str, get: Callable[[Any], Any]) -> list[Column]:
    """The columns of one :class:`~dshctl.stats.records.CostRecord` field: ``{prefix}cost_input`` …
    ``{prefix}cost_total`` as exact decimals and ``{prefix}cost_currency``; all null where the record
    has no cost (no price, mixed currencies, or costs not asked for)."""

    def amount(attribute: str, index: int | None) -> Callable[[Any], Any]:
        def value(record: Any) -> Any:
            cost = get(record)
            if cost is None or cost is msgspec.UNSET:
                return None
            nanos = R.cost_nanos(cost)
            if nanos is None:  # a record without the fold's integers: the amount as its JSON shows it
                return float_decimal_text(getattr(cost, attribute))
            return decimal_text(sum(nanos) if index is None else nanos[index])

        return value

    def currency(record: Any) -> Any:
        cost = get(record)
        return None if cost is None or cost is msgspec.UNSET else cost.currency

    columns = [Column(f"{prefix}cost_{name}", DECIMAL, True, f"{source}.{wire}", amount(name, index))
               for (name, wire), index in zip(COST_PARTS, (0, 1, 2, 3, None))]
    columns.append(Column(f"{prefix}cost_currency", "VARCHAR", True, f"{source}.currency", currency))
    return columns


def decimal_text(nanos: int) -> str:
    """Integer nano-units as exact decimal text (``-1.500000000``), as DuckDB reads it into a DECIMAL."""
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    return f"{sign}{nanos // NANO}.{nanos % NANO:09d}"


def float_decimal_text(amount: float | int) -> str:
    """A cost amount as its JSON number shows it (the shortest text of the float), to nine decimals."""
    import decimal

    return str(decimal.Decimal(repr(amount)).quantize(decimal.Decimal(1).scaleb(-9)))


# -- deriving columns from a record type ---------------------------------------------------------------


def _strip(t: mi.Type) -> tuple[mi.Type, bool]:
    """The type without None, and whether None was part of it (UNSET never shows in type_info)."""
    if isinstance(t, mi.UnionType):
        kept = [x for x in t.types if not isinstance(x, mi.NoneType)]
        nullable = len(kept) < len(t.types)
        if len(kept) == 1:
            return kept[0], nullable
        return mi.UnionType(tuple(kept)), nullable
    return t, False


def _scalar(t: mi.Type) -> str | None:
    if isinstance(t, mi.BoolType):
        return "BOOLEAN"
    if isinstance(t, mi.IntType):
        return "BIGINT"
    if isinstance(t, mi.FloatType):
        return "DOUBLE"
    if isinstance(t, mi.StrType):
        return "VARCHAR"
    if isinstance(t, mi.UnionType) and all(isinstance(x, (mi.IntType, mi.FloatType)) for x in t.types):
        return "DOUBLE"  # dsh's JavaScript numbers: whole or not
    return None


def _attr(name: str) -> Callable[[Any], Any]:
    def get(record: Any) -> Any:
        value = getattr(record, name)
        return None if value is msgspec.UNSET else value

    return get


def _chain(outer: Callable[[Any], Any], inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def get(record: Any) -> Any:
        value = outer(record)
        return None if value is None else inner(value)

    return get


def _as_double(get: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def value(record: Any) -> Any:
        v = get(record)
        return None if v is None else float(v)

    return value


def record_columns(
    cls: type, *, prefix: str = "", source: str = "", nullable: bool = False, skip: Iterable[str] = (),
    renames: dict[str, str] | None = None, get: Callable[[Any], Any] | None = None,
) -> list[Column]:
    """The columns of a record type (see the module docstring)."""
    info = mi.type_info(cls)
    absent = {field.name for field in msgspec.structs.fields(cls) if field.default is msgspec.UNSET}  # type_info hides UNSET
    renames = renames or {}
    skip = set(skip)
    columns: list[Column] = []
    for field in info.fields:
        if field.name in skip:
            continue
        name = prefix + renames.get(field.name, field.name)
        wire = f"{source}.{field.encode_name}" if source else field.encode_name
        getter = _attr(field.name) if get is None else _chain(get, _attr(field.name))
        inner, optional = _strip(field.type)
        null = nullable or optional or field.name in absent  # an absent key is a null cell
        if isinstance(inner, mi.StructType) and inner.cls is R.CostRecord:
            columns.extend(cost_columns(name[: -len("costs")] if name.endswith("costs") else name + "_", wire, getter))
        elif isinstance(inner, mi.StructType):
            columns.extend(record_columns(inner.cls, prefix=name + "_", source=wire, nullable=null, get=getter))
        elif isinstance(inner, mi.ListType):
            columns.append(_list_column(name, wire, inner.item_type, null, getter))
        else:
            sql = _scalar(inner)
            if sql is None:
                raise TypeError(f"{cls.__name__}.{field.name}: no column type for {inner!r}")
            if field.name in TIMESTAMPS:
                sql = "TIMESTAMPTZ"
            elif sql == "DOUBLE":
                getter = _as_double(getter)
            columns.append(Column(name, sql, null, wire, getter))
    return columns


def _list_column(name: str, wire: str, item: mi.Type, nullable: bool, get: Callable[[Any], Any]) -> Column:
    item, _ = _strip(item)
    if isinstance(item, mi.StructType):
        members = record_columns(item.cls)
        struct = "STRUCT(" + ", ".join(f"{m.name} {m.type}" for m in members) + ")[]"
        getters = [(m.name, m.get) for m in members]

        def rows(record: Any) -> Any:
            values = get(record)
            if values is None:
                return None
            return [{key: g(value) for key, g in getters} for value in values]

        return Column(name, struct, nullable, wire + "[]", rows)
    sql = _scalar(item)
    if sql is None:
        raise TypeError(f"{name}: no column type for a list of {item!r}")
    return Column(name, sql + "[]", nullable, wire + "[]", get)


# -- the tables ------------------------------------------------------------------------------------------


class Table(msgspec.Struct, frozen=True):
    """One exported table: its name, the record type its rows come from, and its columns."""

    name: str
    record: type
    columns: tuple[Column, ...]
    doc: str

    def row(self, record: Any, keys: dict[str, Any]) -> dict[str, Any]:
        """The spooled JSON object of one record, with the join keys the record does not carry."""
        row = {}
        for column in self.columns:
            value = keys[column.name] if column.get is None else column.get(record)
            row[column.name] = value
        return row

    def column_names(self) -> list[str]:
        return [column.name for column in self.columns]


def _key(name: str, sql: str, source: str) -> Column:
    return Column(name, sql, True, source)


PARENT = _key("parent_session_id", "VARCHAR", "the header's parentSession")
PROJECT = _key("project", "VARCHAR", "the header's cwd (as stats --by project groups)")
SESSION_MODEL = _key("model", "VARCHAR", "the route with most steps (dshctl.models)")
TURN_MODEL = _key("model", "VARCHAR", "the route of the turn's last step")
IMAGE_MODEL = _key("model", "VARCHAR", "the route of the step the image is in")


KEY_ORDER = ("session_id", "parent_session_id", "project", "model", "turn", "step")
"""The join keys lead every table, in this order (those a table has)."""


def _table(name: str, record: type, doc: str, keys: list[Column], *, skip=(), renames=None) -> Table:
    own = record_columns(record, skip=skip, renames=renames)
    by_name = {column.name: column for column in [*keys, *own]}
    lead = [by_name[key] for key in KEY_ORDER if key in by_name]
    rest = [column for column in own if column.name not in KEY_ORDER]
    return Table(name, record, tuple(lead + rest), doc)


_SESSION_RENAMES = {"id": "session_id", "parent_session": "parent_session_id"}
_ROW_RENAMES = {"session": "session_id"}

TABLES: dict[str, Table] = {
    table.name: table
    for table in (
        _table("sessions", R.SessionRecord, "one row per session: stats' session record",
               [PROJECT, SESSION_MODEL], skip=("kind", "created", "gaps"), renames=_SESSION_RENAMES),
        _table("turns", R.TurnRecord, "one row per turn: stats --by turn",
               [PARENT, PROJECT, TURN_MODEL], skip=("kind",), renames=_ROW_RENAMES),
        _table("steps", R.SettlementRecord, "one row per model-call settlement (failed attempts included); a step's rows add up to stats --by step",
               [PARENT, PROJECT], skip=("kind",), renames=_ROW_RENAMES),
        _table("tool_calls", R.ToolCallRecord, "one row per tool/call",
               [PARENT, PROJECT], skip=("kind",), renames=_ROW_RENAMES),
        _table("images", R.ImageRecord, "one row per image reference: dshctl images",
               [PARENT, PROJECT, IMAGE_MODEL], skip=("kind",), renames=_ROW_RENAMES),
    )
}
"""The five tables, in the order they are written."""


def _check_keys() -> None:
    for table in TABLES.values():
        names = table.column_names()
        duplicated = {name for name in names if names.count(name) > 1}
        if duplicated:
            raise AssertionError(f"table {table.name}: duplicate columns {sorted(duplicated)}")


_check_keys()

from ..options.export import PARTITIONS  # noqa: E402  (declared with the option)
"""``--partition-by``: Hive-style directories by the session's start day or month (UTC) or project."""


def fingerprint() -> str:
    """A short hash of every table's column names and types (in each file's metadata beside the version)."""
    import hashlib

    text = "\n".join(f"{t.name}.{c.name}:{c.type}" for t in TABLES.values() for c in t.columns)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def markdown() -> str:
    """``docs/schema.md``: every table and column."""
    lines = [
        "# dshctl export schema",
        "",
        "<!-- generated by `python -m dshctl.export.schema`; tests/test_export_schema.py keeps it current -->",
        "",
        f"Schema `{SCHEMA}` (fingerprint `{fingerprint()}`), written by `dshctl export --format parquet` and",
        "read by `dshctl sql`. Every Parquet file carries `dshctl.schema` and `dshctl.schema_fingerprint` in",
        "its key-value metadata. Columns are only ever added or widened (the version then goes up), never",
        "renamed; version 2 widened the cost amounts from `DECIMAL(18,9)` to `DECIMAL(38,9)`.",
        "",
        "Types are DuckDB's: `BIGINT` is Parquet INT64, `DOUBLE` a double, `TIMESTAMPTZ` a Parquet",
        "TIMESTAMP in microseconds adjusted to UTC (Spark reads it as `timestamp`), `DECIMAL(38,9)` an exact",
        "amount in the row's `cost_currency`, `X[]` a list. Durations are integer milliseconds (`*_ms`).",
        "**Null** says whether the column can be null; every other column never is (Parquet marks all",
        "columns OPTIONAL). **From** is the key of `dshctl stats --json` the value comes from: its meaning",
        "and its null rule are that key's (`man dshctl`, STATS RECORDS).",
        "",
        "With `--partition-by day|month|project` the partition column (`day=2026-11-30`, `month=2026-11`,",
        "`project=%2Fhome%2Fme%2Fproj`, Hive-escaped) is in the directory names, not in the files; `project`",
        "is then read from the path (DuckDB and Spark do so with Hive partitioning), and every row of a",
        "session is in the partition of the session's start (UTC) or project.",
        "",
    ]
    for table in TABLES.values():
        lines += [f"## `{table.name}`", "", f"{table.doc[0].upper()}{table.doc[1:]}.", "", "| column | type | null | from |", "|---|---|---|---|"]
        for column in table.columns:
            kind = column.type.replace("|", "\\|")
            if kind.startswith("STRUCT("):
                kind = "STRUCT(…)[] (see below)"
            lines.append(f"| `{column.name}` | `{kind}` | {'yes' if column.nullable else 'no'} | {column.source} |")
        lines.append("")
        for column in table.columns:
            if column.type.startswith("STRUCT("):
                lines += [f"`{table.name}.{column.name}` is a list of `{column.type[:-2]}`.", ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.stdout.write(markdown())
