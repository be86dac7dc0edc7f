#include "cli/routesfile.h"

#include "cli/commandparser.h"
#include "cli/commands.h"
#include "cli/exitcodes.h"
#include "core/displaytext.h"
#include "core/routes.h"
#include "dispatch/routingdestinations.h"

#include <QFile>

namespace outbox::cli {

namespace {

// Every problem of the file: its syntax, then what each destination's kind
// says of its settings.
QList<core::RoutesError> problems(const QString &text, const core::DispatcherConfig &base,
                                  core::Routes &routes) {
    QList<core::RoutesError> errors;
    routes = core::Routes::parse(text, errors);
    errors += dispatch::checkDestinations(routes, base);
    std::stable_sort(errors.begin(), errors.end(),
                     [](const auto &a, const auto &b) { return a.line < b.line; });
    return errors;
}

QString describe(const core::Destination &destination) {
    const dispatch::DestinationKind *kind = dispatch::destinationKind(destination.kind);
    QStringList parts{destination.kind, kind ? kind->target(destination) : QString()};
    if (destination.concurrency)
        parts << QStringLiteral("concurrency=%1").arg(*destination.concurrency);
    if (destination.delivery)
        parts << (*destination.delivery == core::Delivery::Batch ? QStringLiteral("mode=batch")
                                                                 : QStringLiteral("mode=event"));
    if (destination.maxAttempts)
        parts << QStringLiteral("max-attempts=%1").arg(*destination.maxAttempts);
    if (destination.baseDelay && destination.maxDelay)
        parts << QStringLiteral("backoff=%1..%2")
                     .arg(core::formatDuration(*destination.baseDelay),
                          core::formatDuration(*destination.maxDelay));
    if (destination.rate > 0)
        parts << QStringLiteral("rate=%1/s").arg(destination.rate);
    parts << QStringLiteral("circuit=%1 failures, %2 open")
                 .arg(destination.circuitFailures)
                 .arg(core::formatDuration(destination.circuitOpen));
    parts.removeAll(QString());
    return parts.join(QStringLiteral("  "));
}

} // namespace

core::Result<void> loadDispatchRoutes(core::DispatcherConfig &config, const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return usage(QStringLiteral("--routes: cannot read '%1': %2; give the routes file, "
                                    "e.g. --routes /etc/outbox/billing.routes")
                         .arg(path, file.errorString()));
    core::Routes routes;
    const QList<core::RoutesError> errors =
        problems(QString::fromUtf8(file.readAll()), config, routes);
    if (!errors.isEmpty())
        return usage(core::routesErrorText(path, errors));
    return core::applyRoutes(config, std::move(routes), path);
}

int runRoutes(CommandContext &context) {
    CommandParser parser(context,
                         QStringLiteral("Check a routes file (README, \"Routing\"): every "
                                        "problem with its line and the fix; with --namespace "
                                        "and --topic, where such an event would go."),
                         CommandParser::Database::NotNeeded);
    parser.addPositional(QStringLiteral("check"), QStringLiteral("The only action."),
                         QStringLiteral("check"));
    parser.addPositional(QStringLiteral("file"), QStringLiteral("The routes file."),
                         QStringLiteral("FILE"));
    QString nameSpace;
    QString topic;
    parser.addOptions({
        valueOption("namespace <ns>", "An event's namespace, to see where it would go.", nameSpace),
        valueOption("topic <topic>", "An event's topic (with --namespace).", topic),
    });
    if (auto stop = parser.parse())
        return *stop;
    if (auto read = parser.readOptions(); !read)
        return parser.usageError(read.errorMessage());
    const QStringList arguments = parser.positionalArguments();
    if (arguments.size() != 2 || arguments.first() != QLatin1String("check"))
        return parser.usageError(QStringLiteral("give the action and the file, e.g. outboxctl "
                                                "routes check /etc/outbox/billing.routes"));
    if (nameSpace.isEmpty() != topic.isEmpty())
        return parser.usageError(QStringLiteral("give both --namespace and --topic to see where "
                                                "an event would go, or neither"));
    const QString &path = arguments.at(1);
    core::DispatcherConfig config;
    if (auto loaded = loadDispatchRoutes(config, path); !loaded) {
        context.console.err() << loaded.errorMessage() << '\n';
        return ExitUsage;
    }
    const core::Routes &routes = *config.routes;
    QTextStream &out = context.console.out();
    out << path << ": " << routes.destinations.size() << " destination"
        << (routes.destinations.size() == 1 ? "" : "s") << ", " << routes.routes.size() << " route"
        << (routes.routes.size() == 1 ? "" : "s") << ", no problems\n";
    for (const core::Destination &destination : routes.destinations)
        out << "  destination " << destination.name << " (line " << destination.line
            << "): " << describe(destination) << '\n';
    for (const core::Route &route : routes.routes)
        out << "  route (line " << route.line << "): namespace " << route.nameSpace << ", topic "
            << route.topic << " -> " << route.destination << '\n';
    if (!routes.routes.last().isCatchAll())
        out << "  events no route matches are not claimed by this dispatcher\n";
    if (nameSpace.isEmpty())
        return ExitOk;
    const core::Route *route = routes.routeFor(nameSpace, topic);
    if (!route) {
        out << "An event of namespace " << nameSpace << ", topic " << topic
            << " matches no route: this dispatcher does not claim it.\n";
        return ExitOk;
    }
    out << "An event of namespace " << nameSpace << ", topic " << topic << " goes to "
        << route->destination << " (the route on line " << route->line << ").\n";
    return ExitOk;
}

} // namespace outbox::cli
