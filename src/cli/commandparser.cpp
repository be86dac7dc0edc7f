#include "cli/commandparser.h"

#include <QRegularExpression>

#include <limits>

namespace outbox::cli {

core::Error usage(const QString &message) {
    return core::Error{core::ErrorKind::Invalid, message};
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

// The usage error for an option value of the wrong kind, e.g.
// "--limit: 'x' is not a whole number".
core::Error invalidValue(const QString &name, const QString &text, const QString &expected) {
    return usage(QStringLiteral("--%1: '%2' is not %3").arg(name, text, expected));
}

// ISO 8601 date or date-time; without an offset it is local time.
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

} // namespace

QCommandLineOption option(const char *name, const char *help, const char *valueName) {
    const QString text = QString::fromUtf8(help);
    return valueName
               ? QCommandLineOption(QString::fromUtf8(name), text, QString::fromUtf8(valueName))
               : QCommandLineOption(QString::fromUtf8(name), text);
}

Option::Option(QCommandLineOption shown,
               std::function<core::Result<void>(const CommandParser &parser)> reader)
    : definition(std::move(shown))
    , read(std::move(reader)) {}

namespace {

// "limit <n>": the option --limit with the value name n; "json": a flag.
QCommandLineOption definitionOf(const char *spec, const char *help) {
    const QString text = QString::fromUtf8(spec);
    const qsizetype space = text.indexOf(QLatin1Char(' '));
    if (space < 0)
        return QCommandLineOption(text, QString::fromUtf8(help));
    QString valueName = text.mid(space + 1);
    valueName.remove(QLatin1Char('<')).remove(QLatin1Char('>'));
    return QCommandLineOption(text.left(space), QString::fromUtf8(help), valueName);
}

} // namespace

QString optionName(const char *spec) {
    return QString::fromUtf8(spec).section(QLatin1Char(' '), 0, 0);
}

Option customOption(const char *spec, const char *help,
                    std::function<core::Result<void>(const CommandParser &parser)> read) {
    return Option(definitionOf(spec, help), std::move(read));
}

Option flagOption(const char *spec, const char *help, bool &target) {
    return customOption(spec, help,
                        [name = optionName(spec), &target](const CommandParser &parser) {
                            target = target || parser.isSet(name);
                            return core::Result<void>();
                        });
}

Option textOption(const char *spec, const char *help, QString &target) {
    return parsedOption(spec, help, target, [name = optionName(spec)](const QString &value) {
        return value.isEmpty() ? core::Result<QString>(
                                     usage(QStringLiteral("--%1 must not be empty").arg(name)))
                               : core::Result<QString>(value);
    });
}

Option valueOption(const char *spec, const char *help, QString &target) {
    return parsedOption(spec, help, target,
                        [](const QString &value) { return core::Result<QString>(value); });
}

Option numberOption(const char *spec, const char *help, double &target, double min) {
    return customOption(
        spec, help,
        [name = optionName(spec), &target, min](const CommandParser &parser) -> core::Result<void> {
            auto value = parser.number(name, target, min);
            if (!value)
                return value.error();
            target = value.value();
            return {};
        });
}

Option durationOption(const char *spec, const char *help, core::Millis &target, core::Millis min) {
    return customOption(
        spec, help,
        [name = optionName(spec), &target, min](const CommandParser &parser) -> core::Result<void> {
            auto value = parser.duration(name);
            if (!value || !value.value())
                return value ? core::Result<void>() : value.error();
            if (*value.value() < min)
                return usage(QStringLiteral("--%1 must be at least %2 (got %3)")
                                 .arg(name, core::formatDuration(min),
                                      core::formatDuration(*value.value())));
            target = *value.value();
            return {};
        });
}

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

void CommandParser::addOption(const Option &option) {
    m_parser.addOption(option.definition);
    if (option.read)
        m_readers.append(option.read);
}

void CommandParser::addOptions(const OptionTable &options) {
    for (const Option &option : options)
        addOption(option);
}

core::Result<void> CommandParser::readOptions() const {
    for (const auto &read : m_readers) {
        if (auto ok = read(*this); !ok)
            return ok;
    }
    return {};
}

std::optional<int> CommandParser::parseAndRead(const QString &hint) {
    if (auto exit = parseOptionsOnly(hint))
        return exit;
    if (auto read = readOptions(); !read)
        return usageError(read.errorMessage());
    return std::nullopt;
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
    // Qt decodes the command line as UTF-8 and turns every invalid byte
    // into U+FFFD, which would then be stored as if it were the text meant.
    for (qsizetype i = 0; i < m_context.arguments.size(); ++i) {
        if (!m_context.arguments.at(i).contains(QChar::ReplacementCharacter))
            continue;
        // Named by its option, never echoed: it may be a secret.
        const QString &argument = m_context.arguments.at(i);
        const QString previous = i > 0 ? m_context.arguments.at(i - 1) : QString();
        QString which = QStringLiteral("argument %1").arg(i + 1);
        if (argument.startsWith(QLatin1String("--")) && argument.contains(QLatin1Char('=')))
            which = QStringLiteral("the value of ") + argument.section(QLatin1Char('='), 0, 0);
        else if (!argument.startsWith(QLatin1Char('-')) && previous.startsWith(QLatin1String("--")))
            which = QStringLiteral("the value of ") + previous;
        return usageError(which + QStringLiteral(" is not valid UTF-8 (or contains U+FFFD); "
                                                 "give the text in UTF-8"));
    }
    QStringList arguments{QStringLiteral("outboxctl ") + m_context.name};
    arguments.append(m_context.arguments);
    if (!m_parser.parse(arguments))
        return usageError(m_parser.errorText());
    return std::nullopt;
}

std::optional<int> CommandParser::parseOptionsOnly(const QString &hint) {
    if (auto exit = parse())
        return exit;
    if (m_parser.positionalArguments().isEmpty())
        return std::nullopt;
    QString message =
        QStringLiteral("unexpected argument '%1'").arg(m_parser.positionalArguments().first());
    if (!hint.isEmpty())
        message += QStringLiteral(" (") + hint + QLatin1Char(')');
    return usageError(message);
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

core::Result<std::optional<core::Millis>> CommandParser::timerDuration(const QString &name) const {
    auto parsed = duration(name);
    if (!parsed || !parsed.value())
        return parsed;
    const QString flag = QStringLiteral("--") + name;
    if (auto bounded = core::checkLongestSetting(flag, *parsed.value()); !bounded)
        return usage(bounded.errorMessage());
    return parsed;
}

core::Result<qint64> CommandParser::integer(const QString &name, qint64 fallback, qint64 min,
                                            qint64 max) const {
    if (!m_parser.isSet(name))
        return fallback;
    const QString text = m_parser.value(name).trimmed();
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    if (!ok)
        return invalidValue(name, text, QStringLiteral("a whole number"));
    if (value >= min && value <= max)
        return value;
    // A minimum at the type's end means "checked later, with a better
    // message" (e.g. DispatcherConfig::validate()): name only the real bound.
    const bool anyMin = min <= std::numeric_limits<int>::min();
    const bool anyMax = max >= std::numeric_limits<qint64>::max();
    if (anyMin && !anyMax)
        return usage(
            QStringLiteral("--%1 must be at most %2 (got %3)").arg(name).arg(max).arg(value));
    if (anyMax && !anyMin)
        return usage(
            QStringLiteral("--%1 must be at least %2 (got %3)").arg(name).arg(min).arg(value));
    return usage(QStringLiteral("--%1 must be between %2 and %3 (got %4)")
                     .arg(name)
                     .arg(min)
                     .arg(max)
                     .arg(value));
}

core::Result<double> CommandParser::number(const QString &name, double fallback, double min) const {
    if (!m_parser.isSet(name))
        return fallback;
    const QString text = m_parser.value(name).trimmed();
    bool ok = false;
    const double value = text.toDouble(&ok);
    if (!ok || !qIsFinite(value))
        return invalidValue(name, text, QStringLiteral("a number"));
    if (value < min)
        return usage(
            QStringLiteral("--%1 must be at least %2 (got %3)").arg(name).arg(min).arg(text));
    return value;
}

core::Result<std::optional<QUuid>> CommandParser::uuid(const QString &name) const {
    if (!m_parser.isSet(name))
        return std::optional<QUuid>();
    const QString text = m_parser.value(name);
    if (const auto parsed = parseUuid(text))
        return std::optional<QUuid>(*parsed);
    return invalidValue(
        name, text,
        QStringLiteral("a UUID (expected the form 0190f5e2-7c1a-7b3e-9a4d-2f6c8e1b0a57)"));
}

core::Result<std::optional<QDateTime>> CommandParser::dateTime(const QString &name) const {
    if (!m_parser.isSet(name))
        return std::optional<QDateTime>();
    const QString text = m_parser.value(name);
    if (const auto parsed = parseDateTime(text))
        return parsed;
    return invalidValue(
        name, text,
        QStringLiteral("an ISO 8601 date or time (e.g. 2024-05-01 or 2024-05-01T12:30:00Z)"));
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

} // namespace outbox::cli
