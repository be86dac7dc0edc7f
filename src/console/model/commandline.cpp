#include "console/model/commandline.h"

#include <QCommandLineOption>
#include <QCommandLineParser>

namespace outbox::console {

namespace {

struct Options {
    QCommandLineOption db{QStringLiteral("db"),
                          QStringLiteral("Connect to this database: a libpq conninfo "
                                         "(\"host=db dbname=app user=ops\") or a URI "
                                         "(postgresql://ops@db/app). Passwords come from "
                                         ".pgpass/PGPASSWORD or are asked for."),
                          QStringLiteral("conninfo")};
    QCommandLineOption profile{QStringLiteral("profile"),
                               QStringLiteral("Connect with a saved connection profile."),
                               QStringLiteral("name")};
    QCommandLineOption fleet{QStringLiteral("fleet"),
                             QStringLiteral("Watch every database of this fleet file at once, "
                                            "with the saved connection profiles "
                                            "(docs/OPERATING.md, \"The fleet\")."),
                             QStringLiteral("file")};
    QCommandLineOption demo{QStringLiteral("demo"),
                            QStringLiteral("Start a private PostgreSQL cluster with a producer, "
                                           "a development runner and the dispatcher, and show "
                                           "it. Everything is removed on exit.")};
    QCommandLineOption readOnly{QStringLiteral("read-only"),
                                QStringLiteral("Disable every action that changes events.")};
    QCommandLineOption screenshot{QStringLiteral("screenshot"),
                                  QStringLiteral("Save a PNG of the main window and quit "
                                                 "(for documentation)."),
                                  QStringLiteral("file")};
    QCommandLineOption screenshotFleet{QStringLiteral("screenshot-fleet"),
                                       QStringLiteral("Save a PNG of the fleet window (of "
                                                      "--fleet, or the demo's) and quit."),
                                       QStringLiteral("file")};
    QCommandLineOption screenshotDelay{QStringLiteral("screenshot-delay"),
                                       QStringLiteral("Seconds to wait before --screenshot "
                                                      "(default 4)."),
                                       QStringLiteral("seconds")};
    QCommandLineOption help{{QStringLiteral("h"), QStringLiteral("help")},
                            QStringLiteral("Show this help.")};
    QCommandLineOption version{{QStringLiteral("v"), QStringLiteral("version")},
                               QStringLiteral("Show the version.")};
};

void setUp(QCommandLineParser &parser, const Options &o) {
    parser.setApplicationDescription(
        QStringLiteral("Operations console for PostgreSQL transactional outboxes.\n"
                       "Without --db, --profile or --demo it opens the connection dialog."));
    parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser.addOptions({o.db, o.profile, o.fleet, o.demo, o.readOnly, o.screenshot,
                       o.screenshotFleet, o.screenshotDelay, o.help, o.version});
}

core::Error invalid(const QString &message) {
    return core::Error{core::ErrorKind::Invalid, message};
}

} // namespace

core::Result<CommandLine> parseCommandLine(const QStringList &arguments) {
    QCommandLineParser parser;
    const Options o;
    setUp(parser, o);
    if (!parser.parse(arguments)) {
        QString text = parser.errorText();
        while (text.endsWith(QLatin1Char('.'))) {
            text.chop(1);
        }
        return invalid(text + QStringLiteral("; run outbox-console --help for the options"));
    }
    if (!parser.positionalArguments().isEmpty()) {
        return invalid(
            QStringLiteral("unexpected argument \"%1\"; pass a connection with --db \"%1\"")
                .arg(parser.positionalArguments().constFirst()));
    }
    CommandLine line;
    line.help = parser.isSet(o.help);
    line.version = parser.isSet(o.version);
    line.demo = parser.isSet(o.demo);
    line.readOnly = parser.isSet(o.readOnly);
    line.profile = parser.value(o.profile).trimmed();
    line.fleetFile = parser.value(o.fleet).trimmed();
    if (parser.isSet(o.fleet) && line.fleetFile.isEmpty()) {
        return invalid(QStringLiteral("--fleet needs a fleet file, e.g. --fleet team.fleet"));
    }
    line.screenshotFile = parser.value(o.screenshot);
    line.screenshotFleetFile = parser.value(o.screenshotFleet);
    if (parser.isSet(o.db)) {
        const QString text = parser.value(o.db);
        if (text.trimmed().isEmpty()) {
            return invalid(QStringLiteral("--db is empty; give a conninfo such as "
                                          "\"host=localhost dbname=app\" or a URI such as "
                                          "postgresql://user@localhost/app"));
        }
        auto info = core::ConnInfo::parse(text);
        if (!info) {
            return invalid(QStringLiteral("--db: %1 (for example --db \"host=localhost "
                                          "dbname=app\" or --db postgresql://user@localhost/app)")
                               .arg(info.errorMessage()));
        }
        line.connInfo = info.value();
    }
    if (parser.isSet(o.profile) && line.profile.isEmpty()) {
        return invalid(QStringLiteral("--profile needs the name of a saved connection profile"));
    }
    const int sources = int(line.connInfo.has_value()) + int(!line.profile.isEmpty()) +
                        int(line.demo) + int(!line.fleetFile.isEmpty());
    if (sources > 1) {
        return invalid(QStringLiteral("--db, --profile, --fleet and --demo each choose what to "
                                      "show; give only one of them"));
    }
    if (parser.isSet(o.screenshotDelay)) {
        bool ok = false;
        const double seconds = parser.value(o.screenshotDelay).toDouble(&ok);
        if (!ok || seconds < 0 || seconds > 3600) {
            return invalid(QStringLiteral("--screenshot-delay needs a number of seconds "
                                          "between 0 and 3600, e.g. --screenshot-delay 5"));
        }
        line.screenshotDelay = std::chrono::milliseconds(qint64(seconds * 1000));
    }
    return line;
}

QString commandLineHelp() {
    QCommandLineParser parser;
    const Options o;
    setUp(parser, o);
    QString text = parser.helpText();
    // Without a QCoreApplication the parser cannot know the program's name.
    text.replace(QLatin1String("<executable_name>"), QLatin1String("outbox-console"));
    return text;
}

} // namespace outbox::console
