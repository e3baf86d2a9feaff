"""``dshctl prices``: which price tables are in force, and the prices of the models in given logs.

Without PATH, every entry of the tables in force; with PATHs (logs, session directories, sessions
roots), the routes their sessions used (as ``dshctl stats`` attributes model calls: the message's
source, else the request header's) with the key each bills as and that key's price history — or "no
price" for a route no table maps, whose calls cost nothing in ``stats`` and get one note.
"""

from __future__ import annotations

from contextlib import closing

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError
from ..options import PricesOptions
from .prices import DAY_NAMES, PriceEntry, PriceTable, Rates, load_prices, rates_text, since_text

SCHEMA = "dshctl-prices/1"


class _Record(msgspec.Struct, kw_only=True, rename="camel"):
    pass


class WindowRecord(_Record, kw_only=True):
    """A time window of an entry: hours (``HH:MM-HH:MM``, start included) on days, in a zone, and its rates."""

    zone: str
    days: list[str] | None
    hours: list[str]
    input: float
    cache_read: float | None
    cache_write: float | None
    output: float
    note: str | None


class EntryRecord(_Record, kw_only=True):
    """One dated entry of a price history (``since`` None: before the dated ones), rates per million."""

    since: str | None
    currency: str
    input: float
    cache_read: float | None
    cache_write: float | None
    output: float
    windows: list[WindowRecord]
    source: str | None
    note: str | None


class RouteRecord(_Record, kw_only=True):
    """A route found in the logs: the sessions that used it, and the price key it bills as (None: no price)."""

    route: str | None
    sessions: int
    price_key: str | None


class TableRecord(_Record, kw_only=True):
    name: str
    path: str
    source: str | None
    version: str | None
    note: str | None


class PricesDocument(_Record, kw_only=True):
    """``dshctl prices --json``: the tables in force, the routes found (with PATHs), and the price
    histories shown (the keys those routes bill as, or every key)."""

    schema: str = SCHEMA
    tables: list[TableRecord]
    providers: dict[str, str]
    aliases: dict[str, str]
    routes: list[RouteRecord] | None
    prices: dict[str, list[EntryRecord]]
    errors: list[dict]


def _number(value) -> float | None:
    return None if value is None else float(value)


def _rate_fields(rates: Rates) -> dict:
    return {
        "input": float(rates.input),
        "cache_read": _number(rates.cache_read),
        "cache_write": _number(rates.cache_write),
        "output": float(rates.output),
    }


def _iso(ms: int) -> str:
    import datetime as _dt

    moment = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{moment.microsecond // 1000:03d}Z" if moment.microsecond else "Z")


def entry_record(entry: PriceEntry) -> EntryRecord:
    return EntryRecord(
        since=None if entry.since_ms is None else _iso(entry.since_ms),
        currency=entry.currency,
        **_rate_fields(entry.rates),
        windows=[
            WindowRecord(
                zone=window.zone,
                days=None if window.days is None else [DAY_NAMES[d - 1] for d in sorted(window.days)],
                hours=[f"{a // 60:02d}:{a % 60:02d}-{b // 60:02d}:{b % 60:02d}" for a, b in window.hours],
                **_rate_fields(window.rates),
                note=window.note,
            )
            for window in entry.windows
        ],
        source=entry.source,
        note=entry.note,
    )


def _routes_of_log(ref) -> list:
    """The routes a log's model calls are attributed to (the stats fold's model records)."""
    from . import log_stats

    return [model.model for model in log_stats(ref).session.dshctl.models]


class _PricesRun:
    def __init__(self, paths: list[str], table: PriceTable, *, color: bool, form: str = "auto", progress: bool = True):
        self.paths = paths
        self.table = table
        self.color = color
        self.form = form
        self.progress = progress
        self.errors: list[dict] = []
        self.routes: dict | None = None
        if paths:
            self._read_routes()

    def _read_routes(self) -> None:
        from ..many import map_logs, resolve_many

        refs = resolve_many(self.paths)
        counts: dict = {}
        with closing(map_logs(_routes_of_log, refs, label="prices", progress=self.progress)) as mapped:
            for ref, result in mapped:
                if isinstance(result, DshctlError):
                    if len(refs) == 1:
                        raise result
                    self.errors.append({"path": ref.display, "error": result.detail()})
                    continue
                for route in result:
                    counts[route] = counts.get(route, 0) + 1
        self.routes = dict(sorted(counts.items(), key=lambda item: (item[0] is None, item[0] or "")))

    def keys(self) -> list[str]:
        """The price keys shown: those the routes found bill as, or every key."""
        if self.routes is None:
            return sorted(self.table.models)
        keys = {self.table.price_key(route) for route in self.routes}
        return sorted(key for key in keys if key is not None)

    def document(self) -> PricesDocument:
        table = self.table
        return PricesDocument(
            tables=[TableRecord(name=t.name, path=t.path, source=t.source, version=t.version, note=t.note) for t in table.info],
            providers=table.providers,
            aliases=table.aliases,
            routes=None if self.routes is None else [
                RouteRecord(route=route, sessions=count, price_key=table.price_key(route)) for route, count in self.routes.items()
            ],
            prices={key: [entry_record(entry) for entry in table.models[key]] for key in self.keys()},
            errors=self.errors,
        )

    def tables(self) -> None:
        from ..tables import Cell, Tables, number, text

        out = Tables(color=self.color, form=self.form)
        table = self.table
        out.table(
            "price tables in force (each overrides the ones before it, model by model)",
            [text("table"), text("file", cut="middle", least=16), text("prices from", fold=True)],
            [[t.name, t.path, " ".join(x for x in (t.source, t.version) if x) or "—"] for t in table.info],
            caption="costs are estimates at these list prices, not a bill",
        )
        if table.providers or table.aliases:
            mapping = [[route, f"{provider}/<model>"] for route, provider in table.providers.items()]
            mapping += [[alias, target] for alias, target in table.aliases.items()]
            out.table("routes and aliases (dsh's provider/model → the prices it bills at)",
                      [_key("route or model", [row[0] for row in mapping]), _other("bills as")], mapping)
        if self.routes is not None:
            found = [[route or "(unknown)", Cell(f"{count:,}", count), table.price_key(route) or "no price (no cost)"]
                     for route, count in self.routes.items()]
            out.table("models found", [_key("route", [row[0] for row in found]), number("sessions", drop=0),
                                       _other("bills as")], found)
        title = "prices per million tokens (a call pays the entry in force at its time; inside a window, the window's rates)"
        rows = [row for key in self.keys() for row in _price_rows(key, table.models[key])]
        rates = [number("in"), number("cache read", drop=2), number("cache write", drop=1), number("out")]
        if out.form == "box" and rows:
            # a table per price key, titled by it: the key is never folded, and the rates fit 60 columns
            out.line(title)
            for key in self.keys():
                keyed = [row[1:] for row in rows if row[0] == key]
                hours = _hours_column([row[1] for row in keyed])
                currencies = sorted({row[-1] for row in keyed})
                named = f"{key} ({', '.join(currencies)})" if len(currencies) == 1 else key
                columns = [text("since", drop=3), hours, *rates, text("currency", drop=0)]
                out.table(named, columns if len(currencies) > 1 else columns[:-1],
                          keyed if len(currencies) > 1 else [row[:-1] for row in keyed])
        else:
            out.table(title, [text("price key"), text("since"), _hours_column([row[2] for row in rows]), *rates, text("currency")],
                      rows or [["—", "", "", "", "", "", "", ""]])
        if self.errors:
            out.table("unreadable (skipped)", [text("log", cut="middle", least=16), text("error", fold=True)], [[e["path"], e["error"]] for e in self.errors])


KEY_WHOLE = 48
"""A route (a table's key) at most this long stays whole at any width; the other columns narrow or hide."""


def _key(header: str, cells: list[str]):
    """A route column, the key of its table: whole when no route is longer than :data:`KEY_WHOLE`,
    else cut in its middle once nothing else narrows."""
    from ..tables import text

    longest = max((len(cell) for cell in cells), default=8)
    return text(header) if longest <= KEY_WHOLE else text(header, cut="middle", least=KEY_WHOLE)


def _other(header: str):
    """A column beside a route: cut in its middle before the route is."""
    from ..tables import text

    return text(header, cut="middle", least=12)


def _hours_column(cells: list):
    """When a row's rates apply: folds at its spaces only (never inside ``09:00-12:00`` or a zone)."""
    from ..tables import text

    words = [len(word) for cell in cells for word in getattr(cell, "text", cell).split()]
    return text("hours", fold=True, least=max(words, default=8))


def _price_rows(key: str, entries: list[PriceEntry]) -> list[list]:
    """The rows of a price key's history: per entry, its rates at other times (``any time`` without
    windows), then a row per window; TSV: an ISO ``since`` (empty: undated), empty hours for the
    entry's own rates, the rates as exact decimals (empty: no price)."""
    from ..tables import Cell

    rows = []
    for entry in entries:
        since = Cell(since_text(entry.since_ms), None if entry.since_ms is None else _iso(entry.since_ms))
        rows.append([key, since, Cell("other hours" if entry.windows else "any time", None), *_rate_cells(entry.rates), entry.currency])
        for window in entry.windows:
            hours = _window_text(window)
            rows.append([key, since, Cell(hours, hours), *_rate_cells(window.rates), entry.currency])
    return rows


def _rate_cells(rates: Rates) -> list:
    from ..tables import Cell

    cells = []
    for value in (rates.input, rates.cache_read, rates.cache_write, rates.output):
        shown = None if value is None else format(value.normalize(), "f")
        cells.append(Cell("—" if shown is None else shown, shown))
    return cells


def _window_text(window) -> str:
    """``09:00-12:00, 14:00-18:00 mon-fri Asia/Shanghai``: the hours, the days (runs of days as
    ``mon-fri``; ``daily``), the zone."""
    hours = ", ".join(f"{a // 60:02d}:{a % 60:02d}-{b // 60:02d}:{b % 60:02d}" for a, b in window.hours)
    return f"{hours} {_days_text(window.days)} {window.zone}"


def _days_text(days) -> str:
    if days is None or len(days) == 7:
        return "daily"
    runs: list[list[int]] = []
    for day in sorted(days):
        if runs and runs[-1][-1] == day - 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    return ",".join(DAY_NAMES[run[0] - 1] if len(run) == 1 else
                    f"{DAY_NAMES[run[0] - 1]}{'-' if len(run) > 2 else ','}{DAY_NAMES[run[-1] - 1]}" for run in runs)


def run_prices(paths: list[str], options: PricesOptions) -> int:
    """The ``dshctl prices`` command: status 0, 1 when a log among many was unreadable, 2 for a
    malformed price file or unusable PATH."""
    from ..output import emit
    from ..stdio import warn

    run = _PricesRun(paths, load_prices(options.prices), color=options.colored, form=options.table_form, progress=options.progress)
    try:
        emit(options.output, document=run.document, records=lambda: [run.document()], table=run.tables)
    finally:
        for error in run.errors:
            warn(f"{error['path']}: {error['error']}")
    return EXIT_FINDINGS if run.errors else EXIT_OK
