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

// A command-line option: --name, its help text and, for an option that takes
// a value, the value's name in the help ("--limit <n>").
QCommandLineOption option(const char *name, const char *help, const char *valueName = nullptr);

// QCommandLineParser for one subcommand, with --help and (optionally) --db
// already added, help text that names "outboxctl <command>", and errors that
// name the problem and point at --help.
class CommandParser final {
public:
    enum class Database { Needed, NotNeeded };

    CommandParser(CommandContext &context, const QString &description,
                  Database database = Database::Needed);
    Q_DISABLE_COPY_MOVE(CommandParser)

    void addOption(const QCommandLineOption &option);
    void addOptions(const QList<QCommandLineOption> &options);
    void addPositional(const QString &name, const QString &description, const QString &syntax = {});
    // Extra text printed after the options in --help (examples, notes).
    void setEpilog(const QString &text) { m_epilog = text; }

    // Parses the arguments. Returns an exit code when the command must stop
    // here (--help: 0, a usage error: 2, already printed), else nullopt.
    std::optional<int> parse();
    // parse() for a command that takes no arguments: one is a usage error
    // that names it, with `hint` (what to give instead) in parentheses.
    std::optional<int> parseOptionsOnly(const QString &hint = {});

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
    core::Result<QDateTime> dateTime(const QString &name) const; // invalid when unset

private:
    CommandContext &m_context;
    QCommandLineParser m_parser;
    QString m_description;
    QString m_epilog;
    QStringList m_positionalSyntax;
    bool m_databaseOption = false;
};

core::Error usage(const QString &message); // an ErrorKind::Invalid error

// Parses a UUID in its usual text forms (with or without braces).
std::optional<QUuid> parseUuid(const QString &text);

} // namespace outbox::cli
