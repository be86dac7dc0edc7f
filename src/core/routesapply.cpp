#include "core/displaytext.h"
#include "core/routes.h"

#include <QFile>
#include <QStringBuilder>

#include <algorithm>
#include <climits>

// What a routes file becomes in a dispatcher: its http destinations'
// configurations and the secrets they name (core/routes.h).
namespace outbox::core {

namespace {

// An http destination's own settings.
const QStringList kHttpKeys = {
    QStringLiteral("url"),
    QStringLiteral("secret-file"),
    QStringLiteral("secret-env"),
    QStringLiteral("secret-credential"),
    QStringLiteral("bearer-token-file"),
    QStringLiteral("bearer-token-credential"),
    QStringLiteral("ca-file"),
    QStringLiteral("request-timeout"),
    QStringLiteral("permanent-status"),
    QStringLiteral("batch-max-events"),
    QStringLiteral("batch-max-bytes"),
};

Result<QStringList> readLines(const QString &what, const QString &path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return Error{
            ErrorKind::Invalid,
            QStringLiteral("%1: cannot read '%2': %3").arg(what, path, file.errorString())};
    QStringList lines;
    const QList<QByteArray> raw = file.readAll().split('\n');
    for (const QByteArray &line : raw) {
        if (const QString trimmed = QString::fromUtf8(line).trimmed(); !trimmed.isEmpty())
            lines << trimmed;
    }
    if (lines.isEmpty())
        return Error{
            ErrorKind::Invalid,
            QStringLiteral("%1: '%2' is empty; put the value on the first line").arg(what, path)};
    return lines;
}

// A file named by `key` (a path), or by `key` without "-file" and with
// "-credential" (a systemd credential's name, read from
// $CREDENTIALS_DIRECTORY).
QString secretPath(const Destination &destination, const QString &key) {
    if (QString file = destination.property(key); !file.isEmpty())
        return file;
    const QString credential = destination.property(key.chopped(5) + QStringLiteral("-credential"));
    const QString directory = qEnvironmentVariable("CREDENTIALS_DIRECTORY");
    if (credential.isEmpty())
        return {};
    return (directory.isEmpty() ? QStringLiteral("$CREDENTIALS_DIRECTORY") : directory) +
           QLatin1Char('/') + credential;
}

// The secrets a destination names, read into it.
Result<void> readSecrets(Destination &destination) {
    const QString where =
        QStringLiteral("destination %1 (line %2), ").arg(destination.name).arg(destination.line);
    if (const QString file = secretPath(destination, QStringLiteral("secret-file"));
        !file.isEmpty()) {
        auto lines = readLines(where + QStringLiteral("secret-file"), file);
        if (!lines)
            return lines.error();
        destination.secrets = lines.value();
    }
    if (const QString variable = destination.property(QStringLiteral("secret-env"));
        !variable.isEmpty()) {
        const QString value = qEnvironmentVariable(variable.toLocal8Bit().constData()).trimmed();
        if (value.isEmpty())
            return Error{ErrorKind::Invalid,
                         where % QStringLiteral("secret-env: the variable ") % variable %
                             QStringLiteral(" is not set; set it to the secret (several, "
                                            "space-separated, while one is rotated)")};
        destination.secrets += value.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    }
    if (const QString file = secretPath(destination, QStringLiteral("bearer-token-file"));
        !file.isEmpty()) {
        auto lines = readLines(where + QStringLiteral("bearer-token-file"), file);
        if (!lines)
            return lines.error();
        if (lines->size() != 1)
            return Error{ErrorKind::Invalid, where % QStringLiteral("bearer-token-file: the file "
                                                                    "must hold one token on one "
                                                                    "line")};
        destination.bearerToken = lines->first();
    }
    return {};
}

} // namespace

QList<RoutesError> checkHttpDestination(const Destination &destination,
                                        const DispatcherConfig &base) {
    QList<RoutesError> errors;
    for (qsizetype i = 0; i < destination.properties.size(); ++i) {
        const QString &key = destination.properties.at(i).first;
        if (!kHttpKeys.contains(key))
            errors.append({destination.propertyLines.value(i),
                           QStringLiteral("'%1' is not a setting of an http destination; use "
                                          "one of %2 (or max-attempts, backoff, mode, "
                                          "concurrency, rate, circuit-failures, circuit-open)")
                               .arg(key, kHttpKeys.join(QStringLiteral(", ")))});
    }
    if (destination.property(QStringLiteral("url")).isEmpty()) {
        errors.append(
            {destination.line, QStringLiteral("http destination '%1' has no url; add e.g. url = "
                                              "https://runner.internal/events")
                                   .arg(destination.name)});
        return errors;
    }
    if (!errors.isEmpty())
        return errors;
    if (const auto config = httpDestinationConfig(destination, base); !config) {
        // The line of the setting the message names, else the header's.
        int line = destination.line;
        for (qsizetype i = 0; i < destination.properties.size(); ++i) {
            if (config.errorMessage().contains(destination.properties.at(i).first))
                line = destination.propertyLines.value(i);
        }
        errors.append(
            {line,
             QStringLiteral("destination '%1': %2").arg(destination.name, config.errorMessage())});
    }
    return errors;
}

Result<DispatcherConfig> httpDestinationConfig(const Destination &destination,
                                               const DispatcherConfig &base) {
    DispatcherConfig config = base;
    config.routes.reset();
    config.routesFile.clear();
    const QString url = destination.property(QStringLiteral("url"));
    config.runnerUrl = QUrl(url, QUrl::StrictMode);
    if (!config.runnerUrl.isValid() ||
        !config.runnerUrl.scheme().startsWith(QLatin1String("http")) ||
        config.runnerUrl.host().isEmpty())
        return Error{ErrorKind::Invalid,
                     QStringLiteral("url = %1 is not an http or https URL with a host; use e.g. "
                                    "url = https://runner.internal/events")
                         .arg(redactedUrlText(url))};
    if (!destination.secrets.isEmpty())
        config.secrets = destination.secrets;
    if (!destination.bearerToken.isEmpty())
        config.bearerToken = destination.bearerToken;
    if (const QString caFile = destination.property(QStringLiteral("ca-file")); !caFile.isEmpty())
        config.caFile = caFile;
    if (const QString timeout = destination.property(QStringLiteral("request-timeout"));
        !timeout.isEmpty()) {
        const auto parsed = parseDuration(timeout);
        if (!parsed)
            return Error{ErrorKind::Invalid,
                         QStringLiteral("request-timeout: ") + parsed.errorMessage()};
        config.requestTimeout = parsed.value();
    }
    if (const QString statuses = destination.property(QStringLiteral("permanent-status"));
        !statuses.isEmpty()) {
        config.permanentStatuses.clear();
        for (const QString &part : statuses.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            bool ok = false;
            const int status = part.trimmed().toInt(&ok);
            if (!ok && part.trimmed() != QLatin1String("none"))
                return Error{ErrorKind::Invalid,
                             QStringLiteral("permanent-status: '%1' is not an HTTP status; give "
                                            "a comma-separated list such as 410,422, or none")
                                 .arg(part.trimmed())};
            if (ok)
                config.permanentStatuses << status;
        }
    }
    if (const QString bytes = destination.property(QStringLiteral("batch-max-bytes"));
        !bytes.isEmpty())
        config.batchMaxBytes = bytes.toLongLong(); // 0 when not a number: refused below
    if (const QString events = destination.property(QStringLiteral("batch-max-events"));
        !events.isEmpty())
        config.batchMaxEvents = events.toInt(); // 0 when not a number: refused below
    config.maxAttempts = destination.maxAttempts.value_or(base.maxAttempts);
    config.baseDelay = destination.baseDelay.value_or(base.baseDelay);
    config.maxDelay = destination.maxDelay.value_or(base.maxDelay);
    config.delivery = destination.delivery.value_or(base.delivery);
    config.concurrency = destination.concurrency.value_or(base.concurrency);
    if (auto valid = config.validate(); !valid)
        return valid.error();
    return config;
}

Result<void> applyRoutes(DispatcherConfig &config, Routes routes, const QString &path) {
    int mostAttempts = 1;
    qint64 inFlight = 0;
    for (Destination &destination : routes.destinations) {
        if (auto read = readSecrets(destination); !read)
            return read;
        destination.maxAttempts = destination.maxAttempts.value_or(config.maxAttempts);
        destination.baseDelay = destination.baseDelay.value_or(config.baseDelay);
        destination.maxDelay = destination.maxDelay.value_or(config.maxDelay);
        destination.delivery = destination.delivery.value_or(config.delivery);
        destination.concurrency = destination.concurrency.value_or(config.concurrency);
        mostAttempts = std::max(mostAttempts, *destination.maxAttempts);
        if (destination.kind != Routes::kindHttp()) {
            inFlight += *destination.concurrency;
            continue;
        }
        const QList<RoutesError> errors = checkHttpDestination(destination, config);
        if (!errors.isEmpty())
            return Error{ErrorKind::Invalid, routesErrorText(path, errors)};
        inFlight += httpDestinationConfig(destination, config)->eventsInFlightLimit();
    }
    config.maxAttempts = mostAttempts;
    config.concurrency = int(std::min<qint64>(inFlight, INT_MAX / 2));
    config.delivery = Delivery::PerEvent;
    config.routes = std::make_shared<const Routes>(std::move(routes));
    config.routesFile = path;
    return {};
}

} // namespace outbox::core
