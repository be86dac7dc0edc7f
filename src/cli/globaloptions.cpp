#include "cli/globaloptions.h"

#include "cli/logging.h"
#include "core/localtimezone.h"

#include <QCoreApplication>
#include <QLoggingCategory>

namespace outbox::cli {

std::optional<int> takeGlobalOptions(QStringList &rest, GlobalOptions &global, Console &console) {
    while (!rest.isEmpty()) {
        const QString &option = rest.first();
        if (option == QLatin1String("--verbose") || option == QLatin1String("-v")) {
            global.verbose = true;
        } else if (option == QLatin1String("--db")) {
            if (rest.size() < 2) {
                console.err() << "outboxctl: missing value after '--db'.\n"
                              << "Try 'outboxctl --help'.\n";
                return ExitUsage;
            }
            rest.removeFirst();
            global.db = rest.first();
        } else if (option.startsWith(QLatin1String("--db="))) {
            global.db = option.mid(5);
        } else {
            return std::nullopt;
        }
        rest.removeFirst();
    }
    return std::nullopt;
}

QStringList globalArguments(const GlobalOptions &global) {
    QStringList arguments;
    if (global.verbose)
        arguments << QStringLiteral("--verbose");
    if (global.db)
        arguments << QStringLiteral("--db") << *global.db;
    return arguments;
}

void applyVerbosity(bool verbose) {
    // The libraries log what they do at debug and info level, which Qt
    // prints by default; on a command line that is noise unless asked for.
    setVerbose(verbose);
    if (!verbose && !qEnvironmentVariableIsSet("QT_LOGGING_RULES"))
        QLoggingCategory::setFilterRules(
            QStringLiteral("outbox.*.debug=false\noutbox.*.info=false"));
}

int runTool(int argc, char *argv[], const QString &name, CommandFunction command) {
    core::pinLocalTimeZone();
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("outboxctl-") + name);
    Console console;
    QStringList rest = QCoreApplication::arguments().mid(1);
    GlobalOptions global;
    if (const auto stop = takeGlobalOptions(rest, global, console))
        return *stop;
    applyVerbosity(global.verbose);
    CommandContext context{name, rest, global.db, console};
    return command(context);
}

} // namespace outbox::cli
