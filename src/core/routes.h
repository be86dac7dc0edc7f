#pragma once

#include "core/dispatcherconfig.h"
#include "core/duration.h"
#include "core/result.h"

#include <QList>
#include <QPair>
#include <QString>
#include <QStringList>

#include <optional>

namespace outbox::core {

// Where a dispatcher delivers, read from a routes file (README, "Routing"):
//
//   # Billing's webhooks get the billing namespace's invoice topics.
//   [destination billing-hooks]
//   kind = http
//   url = https://billing.internal/hooks
//   secret-file = /etc/outbox/billing-secret   # never the secret itself
//   max-attempts = 20
//   backoff = 1s..10m
//   mode = batch
//   concurrency = 8
//   rate = 200/s
//
//   [route]
//   namespace = billing
//   topic = invoice.*
//   destination = billing-hooks
//
//   [route]                  # no namespace or topic: the catch-all
//   destination = everything-else
//
// Lines are `[destination NAME]`, `[route]`, `key = value`, blank, or a
// comment starting with # or ; (whole lines only: a value keeps its #).
// Routes are tried in the order of the file and the first whose namespace
// and topic patterns both match takes the event (* = any characters, ? = one
// character, the rest literal and case-sensitive); an event no route matches
// is not claimed by this dispatcher. Secrets are never in the file: a
// destination names a file (secret-file, bearer-token-file), a systemd
// credential (secret-credential, bearer-token-credential) or an environment
// variable (secret-env), or uses the dispatcher's own.
struct Destination {
    QString name;
    QString kind; // "http", "kafka"
    int line = 0; // of its [destination] header
    // The settings that belong to the kind (url, secret-file, ... for http;
    // librdkafka properties for kafka), in the order of the file.
    QList<QPair<QString, QString>> properties;
    QList<int> propertyLines; // the line of each property

    // Isolation and retries, the same for every kind; unset = the
    // dispatcher's (its --max-attempts, --base-delay/--max-delay, --delivery,
    // --concurrency).
    std::optional<int> maxAttempts;
    std::optional<Millis> baseDelay;
    std::optional<Millis> maxDelay;
    std::optional<Delivery> delivery;
    std::optional<int> concurrency;
    double rate = 0;           // events per second; 0 = no limit
    int circuitFailures = 5;   // consecutive failed attempts that open the circuit
    Millis circuitOpen{30000}; // how long an open circuit waits before a probe

    // Secrets read by applyRoutes() (in memory only, never rendered).
    QStringList secrets;
    QString bearerToken;

    QString property(const QString &key) const; // empty when not set
};

struct Route {
    QString nameSpace = QStringLiteral("*"); // glob
    QString topic = QStringLiteral("*");     // glob
    QString destination;
    int line = 0;

    bool matches(const QString &eventNamespace, const QString &eventTopic) const;
    bool isCatchAll() const;
};

// A problem of a routes file: its line (0 = the file as a whole) and a
// sentence naming the problem and the fix.
struct RoutesError {
    int line = 0;
    QString message;
};

class Routes {
public:
    QList<Destination> destinations;
    QList<Route> routes;

    // Every problem found, in the order of the file; the routes are usable
    // only when the list is empty.
    static Routes parse(const QString &text, QList<RoutesError> &errors);
    // parse() of a file; the error lists every problem as "FILE:LINE: ...".
    static Result<Routes> load(const QString &path);

    // The first route matching the event, or none.
    const Route *routeFor(const QString &eventNamespace, const QString &eventTopic) const;
    const Destination *destination(const QString &name) const;

    static QString kindHttp() { return QStringLiteral("http"); }
    static QString kindKafka() { return QStringLiteral("kafka"); }
};

// "FILE:LINE: message" lines, one per error.
QString routesErrorText(const QString &path, const QList<RoutesError> &errors);

// A glob of a route as a pattern for SQL LIKE (\ escapes).
QString globToLike(const QString &glob);
bool globMatches(const QString &glob, const QString &text);

// The configuration an http destination's publisher gets: `base` (the
// dispatcher's) with the destination's url, secrets, delivery, concurrency
// and other settings; refused (with the setting's line) when a setting is
// unknown or wrong.
Result<DispatcherConfig> httpDestinationConfig(const Destination &destination,
                                               const DispatcherConfig &base);
// The same check, every problem with its line (routes check).
QList<RoutesError> checkHttpDestination(const Destination &destination,
                                        const DispatcherConfig &base);

// Makes `config` deliver by `routes`: each destination's unset settings take
// the dispatcher's, secrets named by a file or a variable are read, and the
// dispatcher's own limits become what its claims need (the most attempts of
// any destination; room in flight for every destination).
Result<void> applyRoutes(DispatcherConfig &config, Routes routes, const QString &path);

} // namespace outbox::core
