// outbox-console-bench: the console's performance targets (issue "The
// console", section Performance) measured in one run, with the targets and
// a PASS/FAIL per figure. See docs/PERFORMANCE.md.

#include "consolebench.h"
#include "core/conninfo.h"
#include "core/localtimezone.h"
#include "fleetphase.h"

#include <QCommandLineParser>
#include <QIcon>
#include <QJsonDocument>
#include <QTextStream>

#include <cstdio>
#include <functional>
#include <type_traits>

using namespace outbox;
using namespace outbox::consolebench;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

int fail(const QString &message) {
    std::fputs(qPrintable(QStringLiteral("outbox-console-bench: ") + message + QLatin1Char('\n')),
               stderr);
    return kExitError;
}

// A whole-number option: its name, help, least value, the --quick run's
// value (-1: the same as the full run's) and where it goes.
struct Count {
    const char *name;
    const char *help;
    qint64 min;
    qint64 quick;
    std::function<void(qint64)> set;
};

} // namespace

int main(int argc, char **argv) {
    outbox::core::pinLocalTimeZone();
    // Offscreen unless told otherwise (QT_QPA_PLATFORM=xcb under xvfb-run):
    // the widgets paint into a raster backing store either way.
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    BenchApplication app(argc, argv);
    // Application names, icon: what outbox-console sets before its window.
    QApplication::setOrganizationName(QStringLiteral("outbox-console"));
    QApplication::setApplicationName(QStringLiteral("outbox-console-bench"));
    QApplication::setApplicationDisplayName(QStringLiteral("Outbox Console"));
    QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/outbox-console.svg")));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Measures the console's performance targets on a throwaway PostgreSQL cluster: start to "
        "first painted rows, switching views, refreshes, the longest GUI stall while the "
        "embedded dispatcher runs, and memory. Prints each figure with its target and "
        "PASS/FAIL."));
    parser.addHelpOption();
    BenchOptions options;
    const auto to = [](auto &field) {
        return [&field](qint64 value) { field = std::remove_reference_t<decltype(field)>(value); };
    };
    const Count counts[] = {
        {"delivered", "Delivered events to load (1000000).", 1, 100000, to(options.size.delivered)},
        {"dead", "Dead events to load (100000).", 1, 10000, to(options.size.dead)},
        {"backlog", "Due pending events for the dispatcher phase (200000).", 0, 20000,
         to(options.backlog)},
        {"stall-seconds", "Length of the dispatcher phase (20; 0 = skip it).", 0, 5,
         to(options.stallSeconds)},
        {"idle-seconds",
         "Seconds of the idle live console on each status page, without and with a search "
         "(10; 0 = skip it).",
         0, 3, to(options.idleSeconds)},
        {"runs", "Starts per view, each a new process (5).", 1, 2, to(options.startRuns)},
        {"switch-rounds", "Rounds through the four status views (5).", 1, 2,
         to(options.switchRounds)},
        {"refreshes", "Refreshes of the delivered view (20).", 1, 5, to(options.refreshRuns)},
    };
    parser.addOption({QStringLiteral("quick"),
                      QStringLiteral("Smoke run: 100k delivered, 10k dead, 20k backlog, 5 s "
                                     "dispatcher phase, fewer repetitions. Figures are not "
                                     "comparable with the full run.")});
    for (const Count &count : counts)
        parser.addOption(
            {QLatin1String(count.name), QLatin1String(count.help), QStringLiteral("N")});
    parser.addOption(
        {QStringLiteral("json"), QStringLiteral("Print one JSON object instead of the table.")});
    parser.addOption({QStringLiteral("fleet"),
                      QStringLiteral("Measure the fleet window instead: N databases of one "
                                     "cluster (a tenth unreachable), one holding the data set "
                                     "(--delivered, --dead)."),
                      QStringLiteral("N")});
    // The cold-start child (this program started again by the benchmark).
    for (const char *name : {"child-start", "db", "view", "t0"}) {
        QCommandLineOption o{QLatin1String(name)};
        if (qstrcmp(name, "child-start") != 0)
            o.setValueName(QStringLiteral("value"));
        o.setFlags(QCommandLineOption::HiddenFromHelp);
        parser.addOption(o);
    }
    parser.process(app);

    if (parser.isSet(QStringLiteral("child-start"))) {
        auto info = core::ConnInfo::parse(parser.value(QStringLiteral("db")));
        const auto status = core::statusFromName(parser.value(QStringLiteral("view")));
        bool ok = false;
        const qint64 t0 = parser.value(QStringLiteral("t0")).toLongLong(&ok);
        if (!info || !status || !ok)
            return fail(QStringLiteral("--child-start needs --db, --view and --t0"));
        return runChildStart(app, info.value(), *status, t0);
    }

    const bool quick = parser.isSet(QStringLiteral("quick"));
    for (const Count &count : counts) {
        const QString name = QLatin1String(count.name);
        bool ok = true;
        if (parser.isSet(name)) {
            const qint64 value = parser.value(name).toLongLong(&ok);
            if (!ok || value < count.min)
                return fail(QStringLiteral("--%1 needs a whole number of at least %2 (got \"%3\")")
                                .arg(name)
                                .arg(count.min)
                                .arg(parser.value(name)));
            count.set(value);
        } else if (quick && count.quick >= 0) {
            count.set(count.quick);
        }
    }

    if (parser.isSet(QStringLiteral("fleet"))) {
        bool ok = false;
        const int databases = parser.value(QStringLiteral("fleet")).toInt(&ok);
        if (!ok || databases < 2 || databases > 500)
            return fail(QStringLiteral("--fleet needs a number of databases from 2 to 500"));
        return runFleetBench(app, options, databases, parser.isSet(QStringLiteral("json")));
    }
    auto results = runBench(app, options, [](const QString &step) {
        std::fputs(qPrintable(QStringLiteral("... ") + step + QLatin1Char('\n')), stderr);
    });
    if (!results)
        return fail(results.errorMessage());
    QTextStream out(stdout);
    if (parser.isSet(QStringLiteral("json")))
        out << QJsonDocument(toJson(options, results.value())).toJson(QJsonDocument::Indented);
    else
        printHuman(out, options, results.value());
    out.flush();
    return kExitOk;
}
