#include "cli/cliutil.h"
#include "cli/commandparser.h"
#include "cli/commands.h"
#include "cli/exitcodes.h"
#include "store/destinationstore.h"

namespace outbox::cli {

// `outboxctl destination pause|resume NAME`: a destination of routing
// dispatchers (README, "Routing"), paused in the database so that no
// dispatcher claims its events; audited.
int runDestination(CommandContext &context) {
    CommandParser parser(
        context, QStringLiteral("Pause or resume a destination of the routing dispatchers "
                                "(`outboxctl dispatch --routes`). While it is paused no "
                                "dispatcher claims the events its routes send there; they stay "
                                "pending, their attempts untouched. Audited; needs the "
                                "outbox_operator role."));
    parser.addPositional(QStringLiteral("action"), QStringLiteral("pause or resume."),
                         QStringLiteral("pause|resume"));
    parser.addPositional(QStringLiteral("name"),
                         QStringLiteral("The destination, as its routes file names it."),
                         QStringLiteral("NAME"));
    QString reason;
    parser.addOption(valueOption(
        "reason <text>", "Why (required to pause; shown to everybody and audited).", reason));
    if (auto stop = parser.parse())
        return *stop;
    if (auto read = parser.readOptions(); !read)
        return parser.usageError(read.errorMessage());
    const QStringList arguments = parser.positionalArguments();
    const QString action = arguments.value(0);
    if (arguments.size() != 2 ||
        (action != QLatin1String("pause") && action != QLatin1String("resume")))
        return parser.usageError(QStringLiteral("give pause or resume and the destination, e.g. "
                                                "outboxctl destination pause billing-hooks "
                                                "--reason \"billing API down, INC-42\""));
    const QString name = arguments.at(1).trimmed();
    const bool pausing = action == QLatin1String("pause");
    if (pausing && reason.trimmed().isEmpty())
        return parser.usageError(QStringLiteral("--reason TEXT is required: say why, e.g. "
                                                "--reason \"billing API down, INC-42\""));
    std::unique_ptr<Connection> connection;
    if (const int exit = connect(parser, connection); exit != ExitOk)
        return exit;
    store::DestinationStore destinations(*connection);
    const auto actor = store::Actor::fromEnvironment(QStringLiteral("outboxctl"));
    if (pausing) {
        if (auto paused = destinations.pause(name, reason.trimmed(), actor); !paused)
            return parser.fail(paused.error());
        context.console.out() << "Paused destination " << name
                              << ". Resume with: outboxctl destination resume " << name << '\n';
        return ExitOk;
    }
    auto resumed = destinations.resume(name, actor);
    if (!resumed)
        return parser.fail(resumed.error());
    if (!resumed.value()) {
        context.console.err() << "outboxctl destination: " << name
                              << " is not paused; nothing was changed\n";
        return ExitFailure;
    }
    context.console.out() << "Resumed destination " << name << ".\n";
    return ExitOk;
}

} // namespace outbox::cli
