#include "cli/cli.h"

#include "cli/commands.h"
#include "cli/globaloptions.h"
#include "core/companionprogram.h"

#include <QtGlobal>

#include <algorithm>
#include <array>

namespace outbox::cli {

namespace {

using namespace Qt::StringLiterals;

constexpr std::array<CommandInfo, 18> kCommands{{
    {"migrate"_L1, "Create or upgrade the outbox schema"_L1, runMigrate},
    {"enqueue"_L1, "Add one event to the outbox"_L1, runEnqueue},
    {"stats"_L1, "Counts per status and per namespace/topic"_L1, runStats},
    {"list"_L1, "List events, a page at a time"_L1, runList},
    {"export"_L1, "Write every event a filter matches as JSON lines"_L1, runExport},
    {"show"_L1, "Show one event: payload, attempts, audit, why it is not delivered"_L1, runShow},
    {"requeue"_L1, "Send dead events again (attempts reset, due now)"_L1, runRequeue},
    {"retry"_L1, "Make pending events due now (skip the backoff wait)"_L1, runRetry},
    {"cancel"_L1, "Mark pending or dead events as cancelled"_L1, runCancel},
    {"purge"_L1, "Delete delivered or dead events"_L1, runPurge},
    {"replay"_L1, "Enqueue delivered or dead events again as new events"_L1, runReplay},
    {"dispatch"_L1, "Run a dispatcher that delivers events to a runner over HTTP"_L1, runDispatch},
    {"dispatchers"_L1, "List the registered dispatchers and what is paused"_L1, runDispatchers},
    {"pause"_L1, "Stop delivering a namespace or topic"_L1, runPause},
    {"resume"_L1, "Deliver a paused namespace or topic again"_L1, runResume},
    {"routes"_L1, "Check a routes file and show where an event would go"_L1, runRoutes},
    {"destination"_L1, "Pause or resume a destination of the routing dispatchers"_L1,
     runDestination},
    {"fleet"_L1, "Many outbox databases at once: 'fleet status --fleet FILE'"_L1, runFleet},
}};

// The development tools: programs of their own beside outboxctl
// (outboxctl-<name>, toolcommands.h), so that outboxctl, the binary a server
// runs, holds none of their code. `outboxctl runner ...` runs them in its
// place, like git runs git-<command>.
struct ToolInfo {
    QLatin1StringView name;
    QLatin1StringView summary;
};

constexpr std::array<ToolInfo, 2> kTools{{
    {"runner"_L1, "Run a development runner that receives events"_L1},
    {"bench"_L1, "Measure enqueue and dispatch throughput"_L1},
}};

#ifndef OUTBOX_VERSION
#define OUTBOX_VERSION "unknown"
#endif

QString generalHelp() {
    QString text = QStringLiteral(
        "Usage: outboxctl [--db CONNINFO] [--verbose] <command> [options]\n"
        "\n"
        "Operate a PostgreSQL transactional outbox: apply its schema, enqueue events,\n"
        "inspect them, and requeue, retry, cancel, purge or replay them.\n"
        "\n"
        "Commands:\n");
    qsizetype width = 0;
    for (const CommandInfo &command : kCommands)
        width = std::max(width, command.name.size());
    for (const ToolInfo &tool : kTools)
        width = std::max(width, tool.name.size());
    const auto line = [width](QLatin1StringView name, QLatin1StringView summary) -> QString {
        return QStringLiteral("  ") + QString(name).leftJustified(width + 2) + QString(summary) +
               QLatin1Char('\n');
    };
    for (const CommandInfo &command : kCommands)
        text += line(command.name, command.summary);
    text +=
        QStringLiteral("\n"
                       "Development tools (separate programs, outboxctl-<tool>, that outboxctl\n"
                       "runs; not needed in production):\n");
    for (const ToolInfo &tool : kTools)
        text += line(tool.name, tool.summary);
    text += QStringLiteral(
        "\n"
        "Global options:\n"
        "  --db CONNINFO  PostgreSQL connection: a libpq key=value string such as\n"
        "                 \"host=db.internal dbname=app user=ops\" or a postgresql:// URI.\n"
        "                 Default: $OUTBOX_DB, else libpq's defaults (PG* variables,\n"
        "                 ~/.pgpass, the local socket). Every command also accepts --db.\n"
        "  -v, --verbose  Log what outboxctl does (to stderr).\n"
        "  -h, --help     Show this help; 'outboxctl <command> --help' shows a command's.\n"
        "  --version      Show the version.\n"
        "\n"
        "Exit codes: 0 success, 1 failure, 2 usage or configuration error,\n"
        "3 database unreachable, 130 interrupted.\n");
    return text;
}

const CommandInfo *findCommand(QStringView name) {
    for (const CommandInfo &command : kCommands) {
        if (name.compare(command.name) == 0)
            return &command;
    }
    return nullptr;
}

const ToolInfo *findTool(QStringView name) {
    for (const ToolInfo &tool : kTools) {
        if (name.compare(tool.name) == 0)
            return &tool;
    }
    return nullptr;
}

// Runs the tool's program in place of this process, with the global options
// and `arguments`; returns only when it is missing or cannot run.
int execTool(const ToolInfo &tool, const GlobalOptions &global, const QStringList &arguments,
             Console &console) {
    const QString program = QStringLiteral("outboxctl-") + QString(tool.name);
    const QString path = core::findCompanionProgram(program);
    if (path.isEmpty()) {
        console.err() << "outboxctl: '" << QString(tool.name)
                      << "' is a development tool, the separate program " << program
                      << ", which is not installed here (not beside outboxctl in "
                      << core::runningProgramDirectory() << ", not on PATH).\n"
                      << "Install it beside outboxctl: the outbox-console package ships it, and a "
                         "build from source makes it next to outboxctl (target "
                      << program << ").\n";
        return ExitUsage;
    }
    console.flush();
    const core::Error error = core::replaceProcess(path, globalArguments(global) + arguments);
    console.err() << "outboxctl: " << error.message << '\n';
    return ExitFailure;
}

// The closest command name for "did you mean": a shared prefix or at most
// two edits.
QString suggestion(const QString &name) {
    auto distance = [](const QString &a, const QString &b) {
        QList<qsizetype> row(b.size() + 1);
        for (qsizetype j = 0; j <= b.size(); ++j)
            row[j] = j;
        for (qsizetype i = 1; i <= a.size(); ++i) {
            qsizetype diagonal = row[0];
            row[0] = i;
            for (qsizetype j = 1; j <= b.size(); ++j) {
                const qsizetype above = row[j];
                row[j] = std::min(
                    {above + 1, row[j - 1] + 1, diagonal + (a.at(i - 1) == b.at(j - 1) ? 0 : 1)});
                diagonal = above;
            }
        }
        return row[b.size()];
    };
    QStringList names;
    for (const CommandInfo &command : kCommands)
        names.append(QString(command.name));
    for (const ToolInfo &tool : kTools)
        names.append(QString(tool.name));
    QString best;
    qsizetype bestDistance = 3;
    for (const QString &candidate : std::as_const(names)) {
        if (name.size() >= 3 && candidate.startsWith(name.toLower()))
            return candidate;
        const qsizetype d = distance(name.toLower(), candidate);
        if (d < bestDistance) {
            bestDistance = d;
            best = candidate;
        }
    }
    return best;
}

int unknownCommand(Console &console, const QString &name) {
    auto &err = console.err();
    err << "outboxctl: unknown command '" << name << "'.";
    const QString closest = suggestion(name);
    if (!closest.isEmpty())
        err << " Did you mean '" << closest << "'?";
    err << "\nRun 'outboxctl --help' to list the commands.\n";
    return ExitUsage;
}

} // namespace

std::span<const CommandInfo> commandTable() {
    return kCommands;
}

int run(const QStringList &arguments) {
    Console console;
    QStringList rest = arguments.mid(1);
    GlobalOptions global;

    while (!rest.isEmpty() && rest.first().startsWith(QLatin1Char('-'))) {
        if (const auto stop = takeGlobalOptions(rest, global, console))
            return *stop;
        if (rest.isEmpty() || !rest.first().startsWith(QLatin1Char('-')))
            break;
        const QString option = rest.takeFirst();
        if (option == QLatin1String("--help") || option == QLatin1String("-h")) {
            console.out() << generalHelp();
            return ExitOk;
        }
        if (option == QLatin1String("--version")) {
            console.out() << "outboxctl " << OUTBOX_VERSION << '\n';
            return ExitOk;
        }
        console.err() << "outboxctl: unknown option '" << option << "' before the command.\n"
                      << "Try 'outboxctl --help'.\n";
        return ExitUsage;
    }

    applyVerbosity(global.verbose);

    if (rest.isEmpty()) {
        console.err() << "outboxctl: no command given.\n\n" << generalHelp();
        return ExitUsage;
    }

    const QString name = rest.takeFirst();
    if (name == QLatin1String("help")) {
        if (rest.isEmpty()) {
            console.out() << generalHelp();
            return ExitOk;
        }
        if (const ToolInfo *tool = findTool(rest.first()))
            return execTool(*tool, global, {QStringLiteral("--help")}, console);
        const CommandInfo *command = findCommand(rest.first());
        if (!command)
            return unknownCommand(console, rest.first());
        CommandContext context{rest.first(), {QStringLiteral("--help")}, global.db, console};
        return command->function(context);
    }

    if (const ToolInfo *tool = findTool(name))
        return execTool(*tool, global, rest, console);
    const CommandInfo *command = findCommand(name);
    if (!command)
        return unknownCommand(console, name);
    CommandContext context{name, rest, global.db, console};
    return command->function(context);
}

} // namespace outbox::cli
