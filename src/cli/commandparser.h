#pragma once

#include "cli/console.h"
#include "cli/exitcodes.h"
#include "core/duration.h"
#include "core/result.h"

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>
#include <QUuid>

#include <functional>
#include <optional>

namespace outbox::cli {

// What a command receives: its name, the arguments after it, and the
// options given before it (`outboxctl --db X list`).
struct CommandContext {
    QString name;
    QStringList arguments;
    std::optional<QString> globalDb;
    Console &console;
};

using CommandFunction = int (*)(CommandContext &context);

class CommandParser;

// A command-line option: --name, its help text and, for an option that takes
// a value, the value's name in the help ("--limit <n>").
QCommandLineOption option(const char *name, const char *help, const char *valueName = nullptr);

// One option of a command: how --help shows it and, when it is bound to where
// the command keeps its value, how the value is read and checked there
// (errors name the flag). An option without `read` is read by the command
// itself (isSet, value).
struct Option {
    Option(QCommandLineOption shown,
           std::function<core::Result<void>(const CommandParser &parser)> reader = {});

    QCommandLineOption definition;
    std::function<core::Result<void>(const CommandParser &parser)> read;
};

// A command's options as data, one row each, in the order --help lists them
// and CommandParser::readOptions() reads them.
using OptionTable = QList<Option>;

// QCommandLineParser for one subcommand, with --help and (optionally) --db
// already added, help text that names "outboxctl <command>", and errors that
// name the problem and point at --help.
class CommandParser final {
public:
    enum class Database { Needed, NotNeeded };

    CommandParser(CommandContext &context, const QString &description,
                  Database database = Database::Needed);
    Q_DISABLE_COPY_MOVE(CommandParser)

    void addOption(const Option &option);
    void addOptions(const OptionTable &options);
    void addPositional(const QString &name, const QString &description, const QString &syntax = {});
    // Extra text printed after the options in --help (examples, notes).
    void setEpilog(const QString &text) { m_epilog = text; }

    // Parses the arguments. Returns an exit code when the command must stop
    // here (--help: 0, a usage error: 2, already printed), else nullopt.
    std::optional<int> parse();
    // parse() for a command that takes no arguments: one is a usage error
    // that names it, with `hint` (what to give instead) in parentheses.
    std::optional<int> parseOptionsOnly(const QString &hint = {});
    // After parse(): reads every bound option into its target, in the order
    // they were added; stops at the first error.
    core::Result<void> readOptions() const;
    // parseOptionsOnly(), then readOptions(), whose errors are usage errors.
    std::optional<int> parseAndRead(const QString &hint = {});

    bool isSet(const QString &name) const { return m_parser.isSet(name); }
    QString value(const QString &name) const { return m_parser.value(name); }
    QStringList values(const QString &name) const { return m_parser.values(name); }
    bool isSet(const QCommandLineOption &option) const { return m_parser.isSet(option); }
    QString value(const QCommandLineOption &option) const { return m_parser.value(option); }
    QStringList positionalArguments() const { return m_parser.positionalArguments(); }
    Console &console() { return m_context.console; }

    QString helpText() const;
    // Prints "outboxctl <command>: <message>" and a hint to --help; returns 2.
    int usageError(const QString &message);
    // Prints the error (no --help hint: the command line was fine) and
    // returns the exit code for its kind.
    int fail(const core::Error &error);
    // The --db value (command line after or before the command), if any.
    std::optional<QString> databaseOption() const;

    // Typed option readers; errors name the flag. An unset option gives the
    // fallback (or nullopt).
    core::Result<std::optional<core::Millis>> duration(const QString &name) const;
    // A duration that ends up in a timer: also at most core::kLongestSetting.
    core::Result<std::optional<core::Millis>> timerDuration(const QString &name) const;
    core::Result<qint64> integer(const QString &name, qint64 fallback, qint64 min,
                                 qint64 max) const;
    core::Result<double> number(const QString &name, double fallback, double min) const;
    core::Result<std::optional<QUuid>> uuid(const QString &name) const;
    core::Result<std::optional<QDateTime>> dateTime(const QString &name) const;

private:
    CommandContext &m_context;
    QCommandLineParser m_parser;
    QString m_description;
    QString m_epilog;
    QStringList m_positionalSyntax;
    QList<std::function<core::Result<void>(const CommandParser &parser)>> m_readers;
    bool m_databaseOption = false;
};

core::Error usage(const QString &message); // an ErrorKind::Invalid error

// Options bound to where the command keeps their values. `spec` is the
// flag's name, followed by the value's name in angle brackets for an option
// that takes one: "limit <n>" is --limit, shown as "--limit <n>". An option
// that is not given leaves its target as it is: the value there is the
// default. Errors are usage errors that name the flag. A bound option refers
// to its target: the target must live until readOptions() has run.
QString optionName(const char *spec); // "limit" for "limit <n>"
// An option read by `read` (whether or not it is given).
Option customOption(const char *spec, const char *help,
                    std::function<core::Result<void>(const CommandParser &parser)> read);
// An option read by `read(parser, target)`.
template <typename T>
Option customOption(const char *spec, const char *help, T &target,
                    core::Result<void> (*read)(const CommandParser &parser, T &target)) {
    return customOption(
        spec, help, [&target, read](const CommandParser &parser) { return read(parser, target); });
}
// An option whose value, when given, is `parse(value)` (a core::Result).
template <typename T, typename Parse>
Option parsedOption(const char *spec, const char *help, T &target, Parse parse) {
    return customOption(spec, help,
                        [name = optionName(spec), &target,
                         parse](const CommandParser &parser) -> core::Result<void> {
                            if (!parser.isSet(name))
                                return {};
                            auto parsed = parse(parser.value(name));
                            if (!parsed)
                                return parsed.error();
                            target = std::move(parsed.value());
                            return {};
                        });
}
// An option read by `read`, a CommandParser reader that gives nullopt when
// the option is not given (CommandParser::duration, ...).
template <typename T, typename Read>
Option readerOption(const char *spec, const char *help, T &target, Read read) {
    return customOption(spec, help,
                        [name = optionName(spec), &target,
                         read](const CommandParser &parser) -> core::Result<void> {
                            auto value = (parser.*read)(name);
                            if (!value)
                                return value.error();
                            if (value.value())
                                target = *value.value();
                            return {};
                        });
}

Option flagOption(const char *spec, const char *help, bool &target);
// Text that must not be empty when the option is given.
Option textOption(const char *spec, const char *help, QString &target);
// Text stored as given (empty too).
Option valueOption(const char *spec, const char *help, QString &target);
// A number of at least min.
Option numberOption(const char *spec, const char *help, double &target, double min);
// A duration ("30s", "5m") of at least `min`.
Option durationOption(const char *spec, const char *help, core::Millis &target, core::Millis min);
// A whole number from min to max (into an int or a qint64).
template <typename T>
Option integerOption(const char *spec, const char *help, T &target, qint64 min, qint64 max) {
    return customOption(spec, help,
                        [name = optionName(spec), &target, min,
                         max](const CommandParser &parser) -> core::Result<void> {
                            auto value = parser.integer(name, target, min, max);
                            if (!value)
                                return value.error();
                            target = T(value.value());
                            return {};
                        });
}
// The readers' kinds, into a value or an optional one: a duration ("30s",
// "5m"); one that ends up in a timer (at most core::kLongestSetting); a
// UUID; an ISO 8601 date or time.
template <typename T> Option durationOption(const char *spec, const char *help, T &target) {
    return readerOption(spec, help, target, &CommandParser::duration);
}
template <typename T> Option timerOption(const char *spec, const char *help, T &target) {
    return readerOption(spec, help, target, &CommandParser::timerDuration);
}
template <typename T> Option uuidOption(const char *spec, const char *help, T &target) {
    return readerOption(spec, help, target, &CommandParser::uuid);
}
template <typename T> Option dateTimeOption(const char *spec, const char *help, T &target) {
    return readerOption(spec, help, target, &CommandParser::dateTime);
}

// Parses a UUID in its usual text forms (with or without braces).
std::optional<QUuid> parseUuid(const QString &text);

} // namespace outbox::cli
