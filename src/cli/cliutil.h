#pragma once

#include "core/conninfo.h"
#include "core/duration.h"
#include "core/event.h"
#include "core/result.h"
#include "store/session.h"

#include <QByteArray>
#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>
#include <QUuid>

#include <memory>
#include <optional>

namespace outbox::cli {

// Exit codes of every outboxctl command; scripts rely on them.
enum ExitCode : int {
    ExitOk = 0,
    ExitFailure = 1,     // anything else (including "no such event")
    ExitUsage = 2,       // bad command line or configuration; nothing was done
    ExitUnavailable = 3, // the database could not be reached
    ExitInterrupted = 130,
};

int exitCodeFor(core::ErrorKind kind);

// The process's standard streams. Commands write results to out() and
// diagnostics, prompts and progress to err(), so stdout stays parseable.
class Console final {
public:
    Console();
    ~Console();
    Q_DISABLE_COPY_MOVE(Console)

    QTextStream &out() { return m_out; }
    QTextStream &err() { return m_err; }
    void flush();

    bool stdinIsTerminal() const;
    bool stdoutIsTerminal() const;
    bool stderrIsTerminal() const;
    // Reads stdin to the end (payload from a pipe).
    QByteArray readAllStdin();
    // One line from stdin without the newline; nullopt at end of input.
    std::optional<QString> readLine();

private:
    QTextStream m_out;
    QTextStream m_err;
};

// What a command receives: its name, the arguments after it, and the
// options given before it (`outboxctl --db X list`).
struct CommandContext {
    QString name;
    QStringList arguments;
    std::optional<QString> globalDb;
    Console &console;
};

using CommandFunction = int (*)(CommandContext &context);

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

    bool isSet(const QString &name) const { return m_parser.isSet(name); }
    QString value(const QString &name) const { return m_parser.value(name); }
    QStringList values(const QString &name) const { return m_parser.values(name); }
    bool isSet(const QCommandLineOption &option) const { return m_parser.isSet(option); }
    QString value(const QCommandLineOption &option) const { return m_parser.value(option); }
    QStringList positionalArguments() const { return m_parser.positionalArguments(); }
    QCommandLineParser &parser() { return m_parser; }
    CommandContext &context() { return m_context; }
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
// ISO 8601 date or date-time; without an offset it is local time.
std::optional<QDateTime> parseDateTime(const QString &text);

// The connection description: --db, else OUTBOX_DB, else libpq defaults
// (PG* variables, ~/.pgpass, the default socket).
core::Result<core::ConnInfo> resolveConnInfo(const std::optional<QString> &db);

// A command's connection: one store session for the command's lifetime. The
// store objects made on it must be destroyed first.
using Connection = store::Session;

enum class SchemaCheck { Required, Skip };

// Resolves the connection info, connects (connect_timeout=10 and the
// application name outboxctl unless given) and (by default) checks that the
// schema is migrated. On failure prints why, naming the server without its
// password, and returns the exit code; on success stores the connection in
// `connection` and returns ExitOk.
int connect(CommandParser &parser, std::unique_ptr<Connection> &connection,
            SchemaCheck check = SchemaCheck::Required);

} // namespace outbox::cli
