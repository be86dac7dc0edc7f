// outbox-console-bench: the console's performance targets (issue "The
// console", section Performance) measured in one run, with the targets and
// a PASS/FAIL per figure. See docs/PERFORMANCE.md.

#include "consolebench.h"
#include "core/conninfo.h"
#include "core/localtimezone.h"

#include <QCommandLineParser>
#include <QFile>
#include <QJsonDocument>
#include <QTextStream>

#include <cstdio>
#include <optional>

using namespace outbox;
using namespace outbox::consolebench;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailedTargets = 1;
constexpr int kExitError = 2;

int fail(const QString &message) {
    std::fputs(qPrintable(QStringLiteral("outbox-console-bench: ") + message + QLatin1Char('\n')),
               stderr);
    return kExitError;
}

// A positive count from an option, or an error naming the option.
std::optional<qint64> count(const QCommandLineParser &parser, const QString &name, qint64 min,
                            QString *error) {
    bool ok = false;
    const qint64 value = parser.value(name).toLongLong(&ok);
    if (!ok || value < min) {
        *error = QStringLiteral("--%1 needs a whole number of at least %2 (got \"%3\")")
                     .arg(name)
                     .arg(min)
                     .arg(parser.value(name));
        return std::nullopt;
    }
    return value;
}

} // namespace

int main(int argc, char **argv) {
    outbox::core::pinLocalTimeZone();
    // Offscreen unless told otherwise (QT_QPA_PLATFORM=xcb under xvfb-run):
    // the widgets paint into a raster backing store either way.
    if (!qEnvironmentVariableIsSet("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    BenchApplication app(argc, argv);
    setUpApplication();

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Measures the console's performance targets on a throwaway PostgreSQL cluster: start to "
        "first painted rows, switching views, refreshes, the longest GUI stall while the "
        "embedded dispatcher runs, and memory. Prints each figure with its target and "
        "PASS/FAIL."));
    parser.addHelpOption();
    const auto option = [&parser](const char *name, const char *help, const char *value = nullptr,
                                  const char *defaultValue = nullptr) {
        QCommandLineOption o{QLatin1String(name), QLatin1String(help)};
        if (value)
            o.setValueName(QLatin1String(value));
        if (defaultValue)
            o.setDefaultValue(QLatin1String(defaultValue));
        parser.addOption(o);
    };
    option("quick", "Smoke run: 100k delivered, 10k dead, 20k backlog, 5 s dispatcher phase, 2k "
                    "rows scrolled, "
                    "fewer repetitions. Figures are not comparable with the full run.");
    option("delivered", "Delivered events to load.", "N", "1000000");
    option("dead", "Dead events to load.", "N", "100000");
    option("backlog", "Due pending events for the dispatcher phase.", "N", "200000");
    option("stall-seconds", "Length of the dispatcher phase (0 = skip it).", "S", "20");
    option("scroll-rows", "Rows to load into the delivered view by scrolling (0 = skip).", "N",
           "10000");
    option("runs", "Starts per view, for new processes and for new windows each.", "N", "5");
    option("switch-rounds", "Rounds through the four status views.", "N", "5");
    option("refreshes", "Refreshes of the delivered view.", "N", "20");
    option("producer-rate", "Events/s enqueued during the dispatcher phase.", "N", "500");
    option("concurrency", "Dispatcher concurrency.", "N", "64");
    option("batch-size", "Dispatcher batch size.", "N", "100");
    option("after-load-sql", "Run this statement after loading (repeatable), e.g. an index to try.",
           "SQL");
    option("json", "Print one JSON object instead of the table.");
    option("json-file", "Also write the JSON object to this file.", "PATH");
    option("strict", "Exit with status 1 when a figure misses its target.");
    // The cold-start child (this program started again by the benchmark).
    QCommandLineOption childStart(QStringLiteral("child-start"));
    childStart.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(childStart);
    QCommandLineOption pause(QStringLiteral("pause-after-load"));
    pause.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(pause);
    for (const char *name : {"db", "view", "t0"}) {
        QCommandLineOption o{QLatin1String(name)};
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

    BenchOptions options;
    options.childProgram = QCoreApplication::applicationFilePath();
    options.pauseAfterLoad = parser.isSet(QStringLiteral("pause-after-load"));
    options.afterLoadSql = parser.values(QStringLiteral("after-load-sql"));
    if (parser.isSet(QStringLiteral("quick"))) {
        options.size.delivered = 100000;
        options.size.dead = 10000;
        options.backlog = 20000;
        options.stallSeconds = 5;
        options.startRuns = 2;
        options.switchRounds = 2;
        options.refreshRuns = 5;
        options.scrollRows = 2000;
    }
    QString error;
    const auto set = [&](const char *name, qint64 min, auto &field) {
        const QString key = QLatin1String(name);
        if (!error.isEmpty() || (parser.isSet(QStringLiteral("quick")) && !parser.isSet(key)))
            return;
        if (auto value = count(parser, key, min, &error))
            field = std::remove_reference_t<decltype(field)>(*value);
    };
    set("delivered", 1, options.size.delivered);
    set("dead", 1, options.size.dead);
    set("backlog", 0, options.backlog);
    set("stall-seconds", 0, options.stallSeconds);
    set("scroll-rows", 0, options.scrollRows);
    set("runs", 1, options.startRuns);
    set("switch-rounds", 1, options.switchRounds);
    set("refreshes", 1, options.refreshRuns);
    set("producer-rate", 0, options.producerRate);
    set("concurrency", 1, options.concurrency);
    set("batch-size", 1, options.batchSize);
    if (!error.isEmpty())
        return fail(error);

    const bool json = parser.isSet(QStringLiteral("json"));
    auto results = runBench(app, options, [](const QString &step) {
        std::fputs(qPrintable(QStringLiteral("... ") + step + QLatin1Char('\n')), stderr);
    });
    if (!results)
        return fail(results.errorMessage());
    if (parser.isSet(QStringLiteral("json-file"))) {
        QFile file(parser.value(QStringLiteral("json-file")));
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
            file.write(
                QJsonDocument(toJson(options, results.value())).toJson(QJsonDocument::Indented)) <
                0) {
            return fail(QStringLiteral("cannot write the JSON to %1: %2")
                            .arg(file.fileName(), file.errorString()));
        }
    }
    QTextStream out(stdout);
    if (json)
        out << QJsonDocument(toJson(options, results.value())).toJson(QJsonDocument::Indented);
    else
        printHuman(out, options, results.value());
    out.flush();
    if (parser.isSet(QStringLiteral("strict"))) {
        if (!bench::allPass(checkTargets(results.value())))
            return kExitFailedTargets;
    }
    return kExitOk;
}
