"""``dshctl prices``: which price tables are in force, and the prices of the models in given logs.

Without PATH, every entry of the tables in force; with PATHs (logs, session directories, sessions
roots), the routes their sessions used (as ``dshctl stats`` attributes model calls: the message's
source, else the request header's) with the key each bills as and that key's price history — or "no
price" for a route no table maps, whose calls cost nothing in ``stats`` and get one note.
"""

from __future__ import annotations

from contextlib import closing

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError, UsageError
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
    def __init__(self, paths: list[str], table: PriceTable, *, color: bool, form: str = "auto", progress: bool = True,
                 view: str = "prices"):
        self.paths = paths
        self.view = view
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
        """The terminal and ``--plain``: every table (the files, the routes and aliases, with PATHs the
        models found, the price histories); ``--files`` or ``--routes`` one of them; ``--tsv`` one table
        always (:meth:`_price_rows_tsv` unless one is chosen)."""
        from ..tables import Tables

        if self.view != "prices":
            self._one_view()
            return
        if self.form == "tsv":
            self._price_rows_tsv()
            return
        out = Tables(color=self.color, form=self.form)
        out.table(*self._files_view(), caption=COST_NOTE)
        if self.table.providers or self.table.aliases:
            out.table(*self._aliases_view())
        if self.routes is not None:
            out.table(*self._found_view())
        self._price_tables(out)
        if self.errors:
            from ..tables import text

            out.table("unreadable (skipped)", [text("log", cut="middle", least=16), text("error", fold=True)], [[e["path"], e["error"]] for e in self.errors])

    def _one_view(self) -> None:
        """``--files`` or ``--routes``: that table alone, in every form; its title and note on a terminal only."""
        from ..tables import print_table, table_form

        if self.view == "files":
            title, columns, rows = self._files_view()
        else:
            title, columns, rows = self._aliases_view() if self.routes is None else self._found_view()
        boxed = table_form(self.form) == "box"
        print_table(title if boxed else None, columns, rows, COST_NOTE if self.view == "files" else None,
                    color=self.color, form=self.form, listing=True)

    def _files_view(self) -> tuple:
        from ..tables import Cell, text

        rows = [[t.name, t.path, Cell(" ".join(x for x in (t.source, t.version) if x) or "—", t.source),
                 Cell("", t.version)] for t in self.table.info]
        return ("price tables in force (each overrides the ones before it, model by model)",
                [text("table"), text("file", cut="middle", least=16), text("prices from", fold=True, tsv="source"),
                 text("version", forms=("tsv",))], rows)

    def _aliases_view(self) -> tuple:
        mapping = [[route, f"{provider}/<model>"] for route, provider in self.table.providers.items()]
        mapping += [[alias, target] for alias, target in self.table.aliases.items()]
        return ("routes and aliases (dsh's provider/model → the prices it bills at)",
                [_key("route or model", [row[0] for row in mapping]), _other("bills as")], mapping)

    def _found_view(self) -> tuple:
        from ..tables import Cell, number

        table = self.table
        found = [[Cell(route or "(unknown)", route), Cell(f"{count:,}", count),
                  Cell(table.price_key(route) or "no price (no cost)", table.price_key(route))]
                 for route, count in (self.routes or {}).items()]
        return ("models found", [_key("route", [row[0].text for row in found]), number("sessions", drop=0),
                                 _other("bills as", tsv="price key")], found)

    def _price_tables(self, out) -> None:
        from ..tables import text

        table = self.table
        title = "prices per million tokens (a call pays the entry in force at its time; inside a window, the window's rates)"
        rows = [row for key in self.keys() for row in _price_rows(key, table.models[key])]
        rates = _rate_columns()
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

    def _price_rows_tsv(self) -> None:
        """``--tsv``: one table of price rows, each window's zone, days and hours apart; with PATHs, each
        route found joined to the rows of the key it bills as (a route without a price: one row, its
        price cells empty), so every row says which rates a route's calls pay and when."""
        from ..tables import number, print_table, text

        columns = [text("price key"), text("since"), text("zone"), text("days"), text("hours"), *_rate_columns(), text("currency")]
        table = self.table
        if self.routes is None:
            rows = [row for key in self.keys() for row in _price_values(key, table.models[key])]
        else:
            columns = [text("route"), number("sessions"), *columns]
            rows = []
            for route, count in self.routes.items():
                key = table.price_key(route)
                priced = _price_values(key, table.models[key]) if key is not None else [[None] * (len(columns) - 2)]
                rows += [[route, count, *row] for row in priced]
        print_table(None, columns, rows, form="tsv")


COST_NOTE = "costs are estimates at these list prices, not a bill"


def _rate_columns() -> list:
    from ..tables import number

    return [number("in"), number("cache read", drop=2), number("cache write", drop=1), number("out")]


def _price_values(key: str, entries: list[PriceEntry]) -> list[list]:
    """The TSV rows of a price key's history: per entry, its own rates (zone, days and hours empty: any
    time outside its windows), then a row per window (its zone; its days as ``mon,tue,…``, all seven for
    every day; its hours as ``09:00-12:00,14:00-18:00``); ``since`` ISO, empty when undated; rates as
    exact decimals, empty for no price."""
    rows = []
    for entry in entries:
        since = None if entry.since_ms is None else _iso(entry.since_ms)
        rows.append([key, since, None, None, None, *_rate_values(entry.rates), entry.currency])
        for window in entry.windows:
            days = ",".join(DAY_NAMES[d - 1] for d in (range(1, 8) if window.days is None else sorted(window.days)))
            hours = ",".join(f"{a // 60:02d}:{a % 60:02d}-{b // 60:02d}:{b % 60:02d}" for a, b in window.hours)
            rows.append([key, since, window.zone, days, hours, *_rate_values(window.rates), entry.currency])
    return rows


def _rate_values(rates: Rates) -> list:
    return [None if value is None else format(value.normalize(), "f")
            for value in (rates.input, rates.cache_read, rates.cache_write, rates.output)]


KEY_WHOLE = 48
"""A route (a table's key) at most this long stays whole at any width; the other columns narrow or hide."""


def _key(header: str, cells: list[str]):
    """A route column, the key of its table: whole when no route is longer than :data:`KEY_WHOLE`,
    else cut in its middle once nothing else narrows."""
    from ..tables import text

    longest = max((len(cell) for cell in cells), default=8)
    return text(header) if longest <= KEY_WHOLE else text(header, cut="middle", least=KEY_WHOLE)


def _other(header: str, tsv: str | None = None):
    """A column beside a route: cut in its middle before the route is."""
    from ..tables import text

    return text(header, cut="middle", least=12, tsv=tsv)


def _hours_column(cells: list):
    """When a row's rates apply: on one line, cut by the one rule that keeps apart the windows that differ
    (a daily and a weekday one: their ends; ``--plain`` and ``--json`` show all), to no fewer than :data:`HOURS_LEAST`
    characters while a rate column can hide (never ``since``, which tells the rows apart)."""
    from ..tables import text

    return text("hours", cut="distinct", least=HOURS_LEAST)  # cut where the windows differ (daily, mon-fri)


HOURS_LEAST = 16
"""Two windows of hours (``09:00-12:00, 14:…``)."""


def _price_rows(key: str, entries: list[PriceEntry]) -> list[list]:
    """The rows of a price key's history as people read them (the terminal and ``--plain``; TSV's are
    :func:`_price_values`): per entry, its rates at other times (``any time`` without windows), then a
    row per window (``09:00-12:00, 14:00-18:00 mon-fri Asia/Shanghai``)."""
    rows = []
    for entry in entries:
        since = since_text(entry.since_ms)
        rows.append([key, since, "other hours" if entry.windows else "any time", *_rate_cells(entry.rates), entry.currency])
        for window in entry.windows:
            rows.append([key, since, _window_text(window), *_rate_cells(window.rates), entry.currency])
    return rows


def _rate_cells(rates: Rates) -> list[str]:
    return ["—" if value is None else value for value in _rate_values(rates)]


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

    if paths and options.files:
        raise UsageError(f"{options.fields['files'].long} lists the price tables in force, whatever the logs: give no PATH")
    run = _PricesRun(paths, load_prices(options.prices), color=options.colored, form=options.table_form, progress=options.progress,
                     view=options.view)
    try:
        emit(options.output, document=run.document, records=lambda: [run.document()], table=run.tables)
    finally:
        for error in run.errors:
            warn(f"{error['path']}: {error['error']}")
    return EXIT_FINDINGS if run.errors else EXIT_OK
