"""``dshctl prices``: which price tables are in force, and the prices of the models in given logs.

Without PATH, every entry of the tables in force; with PATHs (logs, session directories, sessions
roots), the routes their sessions used (as ``dshctl stats`` attributes model calls: the message's
source, else the request header's) with the key each bills as and that key's price history — or "no
price" for a route no table maps, whose calls cost nothing in ``stats`` and get one note.
"""

from __future__ import annotations

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
        for ref, result in map_logs(_routes_of_log, refs, label="prices", progress=self.progress):
            if isinstance(result, DshctlError):
                if len(refs) == 1:
                    raise result
                self.errors.append({"path": ref.display, "error": result.message})
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
        from ..tables import Tables, number, text

        out = Tables(color=self.color, form=self.form)
        table = self.table
        out.table(
            "price tables in force (each overrides the ones before it, model by model)",
            [text("table"), text("file", fold=True), text("prices from", fold=True)],
            [[t.name, t.path, " ".join(x for x in (t.source, t.version) if x) or "—"] for t in table.info],
            caption="costs are estimates at these list prices, not a bill",
        )
        if table.providers or table.aliases:
            mapping = [[route, f"{provider}/<model>"] for route, provider in table.providers.items()]
            mapping += [[alias, target] for alias, target in table.aliases.items()]
            out.table("routes and aliases (dsh's provider/model → the prices it bills at)", [text("route or model", fold=True), text("bills as", fold=True)], mapping)
        if self.routes is not None:
            out.table(
                "models found",
                [text("route", fold=True), number("sessions"), text("bills as", fold=True)],
                [[route or "(unknown)", f"{count:,}", table.price_key(route) or "no price (no cost)"] for route, count in self.routes.items()],
            )
        rows = []
        for key in self.keys():
            for entry in table.models[key]:
                windows = "; ".join(f"{w.text()}: {rates_text(w.rates)}" for w in entry.windows) or "—"
                rows.append([key, since_text(entry.since_ms), entry.currency, rates_text(entry.rates), windows])
        out.table(
            "prices per million tokens (a call pays the entry in force at its time; inside a window, the window's rates)",
            [text("price key", fold=True), text("since", drop=1), text("currency", drop=0), text("rates", fold=True),
             text("windows", fold=True, drop=2)],
            rows or [["—", "", "", "", ""]],
        )
        if self.errors:
            out.table("unreadable (skipped)", [("log", "left"), ("error", "left")], [[e["path"], e["error"]] for e in self.errors])


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
