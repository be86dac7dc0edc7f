#include "dispatch/routingdestinations.h"

#include "core/displaytext.h"
#include "core/kafkasettings.h"
#include "dispatch/dispatcher.h"
#include "dispatch/kafkapublisher.h"

#include <QHash>

namespace outbox::dispatch {

namespace {

DestinationKind httpKind() {
    DestinationKind kind;
    kind.check = core::checkHttpDestination;
    kind.make = [](const core::Destination &destination, const core::DispatcherConfig &base,
                   QObject *parent) -> core::Result<std::unique_ptr<Publisher>> {
        auto config = core::httpDestinationConfig(destination, base);
        if (!config)
            return config.error();
        // Its own HTTP thread, as the dispatcher's single publisher has.
        std::unique_ptr<Publisher> publisher = Dispatcher::httpPublisherFactory()();
        publisher->setParent(parent);
        if (auto configured = publisher->configure(config.value()); !configured)
            return configured.error();
        return publisher;
    };
    kind.target = [](const core::Destination &destination) {
        return core::redactedUrlText(destination.property(QStringLiteral("url")));
    };
    return kind;
}

// A kind whose settings are parsed from the destination's properties
// (`parse`: Result<Settings>(const QList<QPair<QString, QString>> &)) and
// whose publisher is made from them (`make`: Result<unique_ptr<Publisher>>(
// const Settings &, QObject *parent)); routes check reports what `parse`
// refuses at the destination's line.
template <typename Parse, typename Make> DestinationKind settingsKind(Parse parse, Make make) {
    DestinationKind kind;
    kind.check = [parse](const core::Destination &destination, const core::DispatcherConfig &) {
        QList<core::RoutesError> errors;
        if (auto settings = parse(destination.properties); !settings)
            errors.append({destination.line, settings.errorMessage()});
        return errors;
    };
    kind.make = [parse, make](const core::Destination &destination,
                              const core::DispatcherConfig &base,
                              QObject *parent) -> core::Result<std::unique_ptr<Publisher>> {
        auto settings = parse(destination.properties);
        if (!settings)
            return settings.error();
        auto publisher = make(settings.value(), parent);
        if (!publisher)
            return publisher.error();
        // Configured as the dispatcher's own publisher is before its first
        // event: its request timeout bounds a produce, and its timers (the
        // deadline of a report that never comes) start here.
        if (auto configured = publisher.value()->configure(base); !configured)
            return configured.error();
        return publisher;
    };
    kind.target = [](const core::Destination &destination) {
        return destination.property(QStringLiteral("brokers"));
    };
    return kind;
}

QHash<QString, DestinationKind> &kinds() {
    static QHash<QString, DestinationKind> table{
        {core::Routes::kindHttp(), httpKind()},
        {core::Routes::kindKafka(),
         settingsKind(core::KafkaSettings::fromProperties, makeKafkaPublisher)},
    };
    return table;
}

} // namespace

void registerDestinationKind(const QString &kind, DestinationKind entry) {
    kinds().insert(kind, std::move(entry));
}

const DestinationKind *destinationKind(const QString &kind) {
    const auto it = kinds().constFind(kind);
    return it == kinds().cend() ? nullptr : &it.value();
}

QList<core::RoutesError> checkDestinations(const core::Routes &routes,
                                           const core::DispatcherConfig &base) {
    QList<core::RoutesError> errors;
    for (const core::Destination &destination : routes.destinations) {
        if (const DestinationKind *kind = destinationKind(destination.kind))
            errors += kind->check(destination, base);
        else if (!destination.kind.isEmpty())
            errors.append({destination.line, QStringLiteral("kind = %1 is not known to this "
                                                            "build; use http")
                                                 .arg(destination.kind)});
    }
    return errors;
}

} // namespace outbox::dispatch
