// outboxctl fleet status: every database of a fleet file, read at once and
// judged by the rule the console's fleet view uses (store::assessFleet), as
// a table or JSON, with an exit code a monitoring check can use.

#include "cli/commands.h"
#include "cli/output.h"
#include "core/displaytext.h"
#include "store/fleetfile.h"
#include "store/fleethealth.h"
#include "store/fleetstore.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QMutex>
#include <QThreadPool>

#include <algorithm>

namespace outbox::cli {

namespace {

struct Row {
    store::FleetEntry entry;
    core::Result<store::FleetSnapshot> snapshot = core::Error{core::ErrorKind::Failed, {}};
    store::FleetHealth health;
};

// Reads every database at once, each on a connection of its own in a pool
// thread: the slowest one (its connect timeout) bounds the run, not their sum.
QList<Row> readAll(const QList<store::FleetEntry> &entries,
                   const store::Session::Options &options) {
    QList<Row> rows(entries.size());
    QThreadPool pool;
    pool.setMaxThreadCount(std::clamp(int(entries.size()), 1, 16));
    for (int i = 0; i < entries.size(); ++i) {
        rows[i].entry = entries[i];
        pool.start([&rows, &options, i] {
            rows[i].snapshot = store::readFleetSnapshotOnce(rows[i].entry.target, options);
        });
    }
    pool.waitForDone();
    return rows;
}

QJsonValue countJson(const store::FleetCount &count) {
    return QJsonValue(count.value);
}

QJsonObject rowJson(const Row &row) {
    QJsonObject o{{QStringLiteral("name"), row.entry.name},
                  {QStringLiteral("group"), row.entry.group},
                  {QStringLiteral("owner"), row.entry.owner},
                  {QStringLiteral("state"), store::fleetStateName(row.health.state)},
                  {QStringLiteral("reasons"), QJsonArray::fromStringList(row.health.reasons)}};
    if (!row.snapshot) {
        o.insert(QStringLiteral("error"), row.snapshot.errorMessage());
        return o;
    }
    const store::FleetSnapshot &s = row.snapshot.value();
    QJsonArray spark;
    for (qint64 v : s.deliveredPerMinute) {
        spark.append(v);
    }
    o.insert(QStringLiteral("server_time"), jsonTime(s.serverTime));
    o.insert(QStringLiteral("due"), countJson(s.due));
    o.insert(QStringLiteral("due_estimated"), s.due.estimated);
    o.insert(QStringLiteral("waiting"), countJson(s.waiting));
    o.insert(QStringLiteral("waiting_estimated"), s.waiting.estimated);
    o.insert(QStringLiteral("processing"), s.processing);
    o.insert(QStringLiteral("oldest_due_age_s"),
             s.oldestDueAt.isValid() ? QJsonValue(s.oldestDueAgeSeconds()) : QJsonValue());
    o.insert(QStringLiteral("dead"), countJson(s.dead));
    o.insert(QStringLiteral("dead_estimated"), s.dead.estimated);
    o.insert(QStringLiteral("died_last_hour"), s.diedLastHour);
    o.insert(QStringLiteral("delivered_per_minute"), spark);
    o.insert(QStringLiteral("dispatchers_alive"), s.dispatchersAlive);
    o.insert(QStringLiteral("dispatchers_gone"), s.dispatchersGone);
    o.insert(QStringLiteral("paused_namespaces"), QJsonArray::fromStringList(s.pausedNamespaces));
    if (s.topError) {
        o.insert(QStringLiteral("top_error"),
                 QJsonObject{{QStringLiteral("signature"), s.topError->signature},
                             {QStringLiteral("count"), s.topError->count},
                             {QStringLiteral("sampled"), s.topErrorSampled}});
    }
    return o;
}

QStringList rowCells(const Row &row) {
    const QString state = store::fleetStateName(row.health.state);
    const QString why = core::escapeControls(row.health.reasons.join(QLatin1String("; ")));
    if (!row.snapshot) {
        return {row.entry.name, row.entry.group, state, {}, {}, {}, {}, {}, {}, {}, {}, why};
    }
    const store::FleetSnapshot &s = row.snapshot.value();
    return {row.entry.name,
            row.entry.group,
            state,
            store::fleetCountText(s.due),
            s.oldestDueAt.isValid() ? store::fleetSpan(s.oldestDueAgeSeconds()) : QString(),
            store::fleetCountText(s.waiting),
            store::fleetCountText(s.dead),
            QLocale().toString(s.diedLastHour),
            s.deliveredPerMinute.isEmpty() ? QString()
                                           : QLocale().toString(s.deliveredPerMinute.last()),
            QStringLiteral("%1/%2").arg(s.dispatchersAlive).arg(s.dispatchersGone),
            core::escapeControls(s.pausedNamespaces.join(QLatin1Char(','))),
            why};
}

int runFleetStatus(CommandContext &context) {
    CommandParser parser(
        context,
        QStringLiteral("Every database of a fleet file at once, worst first: state (ok, "
                       "warning, alert, unreachable) and why, events due and waiting, the "
                       "oldest due one's age, dead events and those that died in the last "
                       "hour, deliveries in the last minute, dispatchers alive and gone, paused "
                       "namespaces. Each database is read on its own read-only connection with "
                       "a connect and statement timeout, from cheap sources only (counts stop "
                       "at 10,000 and are estimated beyond, marked ~)."),
        CommandParser::Database::NotNeeded);
    const auto fleet =
        option("fleet", "The fleet file (docs/OPERATING.md, \"The fleet\").", "file");
    const auto json = option("json", "Print one JSON object.");
    const auto timeout =
        option("timeout", "Connect and statement timeout per database (default 5s).", "duration");
    const auto oldestDue =
        option("oldest-due-age",
               "Alert when the oldest due event has waited this long (default 5m; 0 turns it off).",
               "duration");
    const auto deaths = option(
        "deaths-per-minute", "Alert when more events died in a minute (default 10; 0: off).", "n");
    parser.addOption(fleet);
    parser.addOption(json);
    parser.addOption(timeout);
    parser.addOption(oldestDue);
    parser.addOption(deaths);
    parser.setEpilog(QStringLiteral(
        "Exit codes: 0 every database ok or warning, 1 one or more in alert, 2 usage\n"
        "(a bad fleet file), 3 one or more unreachable and none in alert.\n\n"
        "JSON keys: state (the worst), databases[{name, group, owner, state, reasons,\n"
        "error, server_time, due, due_estimated, waiting, waiting_estimated, processing,\n"
        "oldest_due_age_s, dead, dead_estimated, died_last_hour, delivered_per_minute\n"
        "(the last 30 minutes, oldest first), dispatchers_alive, dispatchers_gone,\n"
        "paused_namespaces, top_error{signature, count, sampled}}], worst first."));
    if (auto exit = parser.parseOptionsOnly(QStringLiteral("the databases come from --fleet")))
        return *exit;
    if (!parser.isSet(fleet))
        return parser.usageError(QStringLiteral("missing --fleet FILE (the databases to read)"));
    auto timeoutValue = parser.duration(QStringLiteral("timeout"));
    if (!timeoutValue)
        return parser.fail(timeoutValue.error());
    auto oldestValue = parser.duration(QStringLiteral("oldest-due-age"));
    if (!oldestValue)
        return parser.fail(oldestValue.error());
    auto deathsValue = parser.number(QStringLiteral("deaths-per-minute"), 10, 0);
    if (!deathsValue)
        return parser.fail(deathsValue.error());
    auto entries = store::readFleetFile(parser.value(fleet));
    if (!entries)
        return parser.fail(entries.error());

    store::FleetThresholds thresholds;
    if (oldestValue.value())
        thresholds.oldestDueAgeSeconds = oldestValue.value()->count() / 1000;
    thresholds.deathsPerMinute = deathsValue.value();
    const core::Millis limit = timeoutValue.value().value_or(core::Millis(5000));
    const int connectSeconds = std::max(2, int((limit.count() + 999) / 1000)); // libpq's least
    QList<Row> rows =
        readAll(entries.value(), store::fleetSessionOptions(QStringLiteral("outboxctl-fleet"),
                                                            connectSeconds, limit));
    for (Row &row : rows) {
        if (row.snapshot) {
            row.health = store::assessFleet(row.snapshot.value(), thresholds);
        } else {
            row.health.state = store::FleetState::Unreachable;
            row.health.reasons << row.snapshot.errorMessage().section(QLatin1Char('\n'), 0, 0);
        }
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
        const int sa = store::fleetSeverity(a.health.state);
        const int sb = store::fleetSeverity(b.health.state);
        if (sa != sb)
            return sa > sb;
        if (a.entry.group != b.entry.group)
            return a.entry.group < b.entry.group;
        return a.entry.name < b.entry.name;
    });
    const store::FleetState worst =
        rows.isEmpty() ? store::FleetState::Ok : rows.constFirst().health.state;
    bool anyUnreachable = false;
    for (const Row &row : std::as_const(rows))
        anyUnreachable = anyUnreachable || row.health.state == store::FleetState::Unreachable;

    auto &out = context.console.out();
    if (parser.isSet(json)) {
        QJsonArray databases;
        for (const Row &row : std::as_const(rows))
            databases.append(rowJson(row));
        out << jsonText(QJsonObject{{QStringLiteral("state"), store::fleetStateName(worst)},
                                    {QStringLiteral("databases"), databases}})
            << '\n';
    } else {
        Table table({QStringLiteral("DATABASE"), QStringLiteral("GROUP"), QStringLiteral("STATE"),
                     QStringLiteral("DUE"), QStringLiteral("OLDEST DUE"), QStringLiteral("WAITING"),
                     QStringLiteral("DEAD"), QStringLiteral("DIED 1H"),
                     QStringLiteral("DELIVERED/MIN"), QStringLiteral("DISPATCHERS"),
                     QStringLiteral("PAUSED"), QStringLiteral("WHY")});
        for (int c : {3, 4, 5, 6, 7, 8})
            table.setRightAligned(c);
        for (const Row &row : std::as_const(rows))
            table.addRow(rowCells(row));
        table.print(out);
    }
    out.flush();
    if (worst == store::FleetState::Alert)
        return ExitFailure;
    return anyUnreachable ? ExitUnavailable : ExitOk;
}

} // namespace

int runFleet(CommandContext &context) {
    const QString sub = context.arguments.value(0);
    if (sub == QLatin1String("status")) {
        CommandContext inner{context.name + QStringLiteral(" status"), context.arguments.mid(1),
                             context.globalDb, context.console};
        return runFleetStatus(inner);
    }
    auto &err = context.console.err();
    if (sub.isEmpty() || sub == QLatin1String("--help") || sub == QLatin1String("-h")) {
        (sub.isEmpty() ? err : context.console.out())
            << "Usage: outboxctl fleet status --fleet FILE [--json]\n"
               "\n"
               "Many outbox databases at once (a fleet file, docs/OPERATING.md).\n"
               "  status  every database's state, worst first\n";
        if (sub.isEmpty()) {
            return ExitUsage;
        }
        // The subcommand's own help follows (and so goes into the man page).
        context.console.out() << '\n';
        CommandContext inner{context.name + QStringLiteral(" status"),
                             {QStringLiteral("--help")},
                             context.globalDb,
                             context.console};
        return runFleetStatus(inner);
    }
    err << "outboxctl fleet: unknown subcommand '" << sub
        << "'; the one there is: status (outboxctl fleet status --fleet FILE)\n";
    return ExitUsage;
}

} // namespace outbox::cli
