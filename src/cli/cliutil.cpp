#include "cli/cliutil.h"

#include "store/migrator.h"

#include <QIODevice>
#include <QRegularExpression>

#include <cstdio>
#include <string>
#include <unistd.h>

namespace outbox::cli {

int exitCodeFor(core::ErrorKind kind) {
    switch (kind) {
    case core::ErrorKind::Invalid:
        return ExitUsage;
    case core::ErrorKind::Unavailable:
        return ExitUnavailable;
    case core::ErrorKind::PermissionDenied:
    case core::ErrorKind::NotFound:
    case core::ErrorKind::Conflict:
    case core::ErrorKind::Failed:
        break;
    }
    return ExitFailure;
}

core::Error usage(const QString &message) {
    return core::Error{core::ErrorKind::Invalid, message};
}

// --- Console -----------------------------------------------------------------

Console::Console()
    : m_out(stdout, QIODevice::WriteOnly)
    , m_err(stderr, QIODevice::WriteOnly) {}

Console::~Console() {
    flush();
}

void Console::flush() {
    m_out.flush();
    m_err.flush();
}

bool Console::stdinIsTerminal() const {
    return ::isatty(STDIN_FILENO) == 1;
}

bool Console::stdoutIsTerminal() const {
    return ::isatty(STDOUT_FILENO) == 1;
}

bool Console::stderrIsTerminal() const {
    return ::isatty(STDERR_FILENO) == 1;
}

QByteArray Console::readAllStdin() {
    QByteArray data;
    char buffer[65536];
    size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, stdin)) > 0)
        data.append(buffer, qsizetype(n));
    return data;
}

std::optional<QString> Console::readLine() {
    std::string line;
    int c = 0;
    bool any = false;
    while ((c = std::fgetc(stdin)) != EOF) {
        any = true;
        if (c == '\n')
            break;
        line.push_back(char(c));
    }
    if (!any)
        return std::nullopt;
    return QString::fromStdString(line).trimmed();
}

namespace {

// QCommandLineParser wraps option descriptions but not the command's own
// description. Help text is flowed here to fit a terminal: consecutive plain
// lines form a paragraph; blank lines and indented lines (examples) are
// kept as they are.
QString wrap(const QString &text, int width = 79) {
    QStringList out;
    QStringList words;
    auto flush = [&] {
        QString line;
        for (const QString &word : std::as_const(words)) {
            if (!line.isEmpty() && line.size() + 1 + word.size() > width) {
                out << line;
                line.clear();
            }
            line += (line.isEmpty() ? QString() : QStringLiteral(" ")) + word;
        }
        if (!line.isEmpty())
            out << line;
        words.clear();
    };
    for (const QString &line : text.split(QLatin1Char('\n'))) {
        if (line.trimmed().isEmpty() || line.startsWith(QLatin1Char(' '))) {
            flush();
            out << line;
        } else {
            words << line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        }
    }
    flush();
    return out.join(QLatin1Char('\n'));
}

} // namespace

// --- CommandParser -----------------------------------------------------------

CommandParser::CommandParser(CommandContext &context, const QString &description, Database database)
    : m_context(context)
    , m_description(description) {
    m_parser.setApplicationDescription(wrap(description));
    m_parser.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    m_parser.addOption(QCommandLineOption({QStringLiteral("h"), QStringLiteral("help")},
                                          QStringLiteral("Show this help and exit.")));
    if (database == Database::Needed) {
        m_databaseOption = true;
        m_parser.addOption(QCommandLineOption(
            QStringLiteral("db"),
            QStringLiteral("PostgreSQL connection: a libpq key=value string or a postgresql:// "
                           "URI. Default: $OUTBOX_DB, else libpq's defaults (PG* variables, "
                           "~/.pgpass, the local socket)."),
            QStringLiteral("conninfo")));
    }
}

void CommandParser::addOption(const QCommandLineOption &option) {
    m_parser.addOption(option);
}

void CommandParser::addOptions(const QList<QCommandLineOption> &options) {
    m_parser.addOptions(options);
}

void CommandParser::addPositional(const QString &name, const QString &description,
                                  const QString &syntax) {
    m_parser.addPositionalArgument(name, description, syntax);
    m_positionalSyntax.append(syntax.isEmpty() ? name : syntax);
}

std::optional<int> CommandParser::parse() {
    // --help wins over any other mistake on the line: someone asking for
    // help should get it.
    for (const QString &argument : std::as_const(m_context.arguments)) {
        if (argument == QLatin1String("--"))
            break;
        if (argument == QLatin1String("--help") || argument == QLatin1String("-h")) {
            m_context.console.out() << helpText();
            return ExitOk;
        }
    }
    QStringList arguments{QStringLiteral("outboxctl ") + m_context.name};
    arguments.append(m_context.arguments);
    if (!m_parser.parse(arguments))
        return usageError(m_parser.errorText());
    return std::nullopt;
}

QString CommandParser::helpText() const {
    QString text = m_parser.helpText();
    // QCommandLineParser puts the executable's full path in the usage line.
    const qsizetype firstNewline = text.indexOf(QLatin1Char('\n'));
    QString usageLine =
        QStringLiteral("Usage: outboxctl ") + m_context.name + QStringLiteral(" [options]");
    for (const QString &syntax : m_positionalSyntax)
        usageLine += QLatin1Char(' ') + syntax;
    text = usageLine + QLatin1Char('\n') + (firstNewline >= 0 ? text.mid(firstNewline) : QString());
    if (!m_epilog.isEmpty())
        text += QLatin1Char('\n') + wrap(m_epilog) + QLatin1Char('\n');
    return text;
}

int CommandParser::usageError(const QString &message) {
    auto &err = m_context.console.err();
    err << "outboxctl " << m_context.name << ": " << message << '\n'
        << "Try 'outboxctl " << m_context.name << " --help'.\n";
    err.flush();
    return ExitUsage;
}

int CommandParser::fail(const core::Error &error) {
    auto &err = m_context.console.err();
    err << "outboxctl " << m_context.name << ": " << error.message << '\n';
    err.flush();
    return exitCodeFor(error.kind);
}

std::optional<QString> CommandParser::databaseOption() const {
    if (m_databaseOption && m_parser.isSet(QStringLiteral("db")))
        return m_parser.value(QStringLiteral("db"));
    return m_context.globalDb;
}

core::Result<std::optional<core::Millis>> CommandParser::duration(const QString &name) const {
    if (!m_parser.isSet(name))
        return std::optional<core::Millis>();
    auto parsed = core::parseDuration(m_parser.value(name));
    if (!parsed)
        return usage(QStringLiteral("--") + name + QStringLiteral(": ") + parsed.errorMessage());
    return std::optional<core::Millis>(parsed.value());
}

core::Result<qint64> CommandParser::integer(const QString &name, qint64 fallback, qint64 min,
                                            qint64 max) const {
    if (!m_parser.isSet(name))
        return fallback;
    const QString text = m_parser.value(name).trimmed();
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    if (!ok)
        return usage(QStringLiteral("--%1: '%2' is not a whole number").arg(name, text));
    if (value < min || value > max)
        return usage(QStringLiteral("--%1 must be between %2 and %3 (got %4)")
                         .arg(name)
                         .arg(min)
                         .arg(max)
                         .arg(value));
    return value;
}

core::Result<double> CommandParser::number(const QString &name, double fallback, double min) const {
    if (!m_parser.isSet(name))
        return fallback;
    const QString text = m_parser.value(name).trimmed();
    bool ok = false;
    const double value = text.toDouble(&ok);
    if (!ok || !qIsFinite(value))
        return usage(QStringLiteral("--%1: '%2' is not a number").arg(name, text));
    if (value < min)
        return usage(
            QStringLiteral("--%1 must be at least %2 (got %3)").arg(name).arg(min).arg(text));
    return value;
}

core::Result<std::optional<QUuid>> CommandParser::uuid(const QString &name) const {
    if (!m_parser.isSet(name))
        return std::optional<QUuid>();
    const QString text = m_parser.value(name);
    auto parsed = parseUuid(text);
    if (!parsed)
        return usage(QStringLiteral("--%1: '%2' is not a UUID (expected the form "
                                    "0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57)")
                         .arg(name, text));
    return std::optional<QUuid>(*parsed);
}

core::Result<QDateTime> CommandParser::dateTime(const QString &name) const {
    if (!m_parser.isSet(name))
        return QDateTime();
    const QString text = m_parser.value(name);
    auto parsed = parseDateTime(text);
    if (!parsed)
        return usage(QStringLiteral("--%1: '%2' is not an ISO 8601 date or time (e.g. "
                                    "2024-05-01 or 2024-05-01T12:30:00Z)")
                         .arg(name, text));
    return *parsed;
}

std::optional<QUuid> parseUuid(const QString &text) {
    static const QRegularExpression pattern(QStringLiteral(
        "^\\{?[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\\}?$"));
    const QString trimmed = text.trimmed();
    if (!pattern.match(trimmed).hasMatch())
        return std::nullopt;
    if (trimmed.startsWith(QLatin1Char('{')) != trimmed.endsWith(QLatin1Char('}')))
        return std::nullopt;
    return QUuid::fromString(trimmed);
}

std::optional<QDateTime> parseDateTime(const QString &text) {
    const QString trimmed = text.trimmed();
    QDateTime time = QDateTime::fromString(trimmed, Qt::ISODateWithMs);
    if (time.isValid())
        return time;
    const QDate date = QDate::fromString(trimmed, Qt::ISODate);
    if (date.isValid())
        return date.startOfDay();
    return std::nullopt;
}

// --- connection --------------------------------------------------------------

core::Result<core::ConnInfo> resolveConnInfo(const std::optional<QString> &db) {
    if (db) {
        auto parsed = core::ConnInfo::parse(*db);
        if (!parsed)
            return usage(QStringLiteral("--db: ") + parsed.errorMessage());
        return parsed;
    }
    auto fromEnvironment = core::ConnInfo::fromEnvironment();
    if (!fromEnvironment)
        return usage(fromEnvironment.errorMessage());
    return fromEnvironment;
}

int connect(CommandParser &parser, std::unique_ptr<Connection> &connection, SchemaCheck check) {
    auto info = resolveConnInfo(parser.databaseOption());
    if (!info)
        return parser.usageError(info.errorMessage());
    // A command line tool must not hang forever on a black-holed host, and
    // the server's pg_stat_activity should say who is connected.
    auto session = std::make_unique<Connection>(
        info.value(), store::Session::Options{.applicationName = QStringLiteral("outboxctl"),
                                              .connectTimeoutSeconds = 10});
    // The store's message already names the server (never the password) and
    // says "cannot connect" when it is unreachable.
    if (auto opened = session->open(); !opened)
        return parser.fail(opened.error());
    if (check == SchemaCheck::Required) {
        auto current = store::Migrator(*session).checkCurrent();
        if (!current)
            return parser.fail(current.error());
    }
    connection = std::move(session);
    return ExitOk;
}

} // namespace outbox::cli
