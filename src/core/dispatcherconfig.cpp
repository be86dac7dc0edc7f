#include "core/dispatcherconfig.h"

#include "core/displaytext.h"
#include "core/enumnames.h"
#include "core/uuidtext.h"
#include "core/webhooksigner.h"

#include <QFileInfo>
#include <QStringList>

#include <algorithm>
#include <climits>
#include <utility>

namespace outbox::core {

namespace {

Result<void> refuse(const QString &message) {
    return Result<void>::failure(ErrorKind::Invalid, message);
}

QString showUrl(const QUrl &url) {
    return redactedUrl(url);
}

Result<void> checkPositive(const char *flag, int value, const char *example) {
    if (value >= 1)
        return {};
    return refuse(QLatin1String(flag) % QStringLiteral(" must be at least 1 (got ") %
                  QString::number(value) % QStringLiteral("); use e.g. ") % QLatin1String(flag) %
                  QLatin1Char(' ') % QLatin1String(example));
}

Result<void> checkPositive(const char *flag, Millis value, const char *example) {
    if (value.count() > 0)
        return {};
    return refuse(QLatin1String(flag) % QStringLiteral(" must be longer than 0 (got ") %
                  formatDuration(value) % QStringLiteral("); use e.g. ") % QLatin1String(flag) %
                  QLatin1Char(' ') % QLatin1String(example));
}

constexpr EnumName<Delivery> kDeliveryNames[] = {{Delivery::PerEvent, "per-event"},
                                                 {Delivery::Batch, "batch"}};

} // namespace

QString deliveryName(Delivery delivery) {
    return nameOf(kDeliveryNames, delivery, "per-event");
}

std::optional<Delivery> deliveryNamed(QStringView name) {
    return valueNamed(kDeliveryNames, name);
}

namespace {

Result<void> checkRunnerUrl(const QUrl &runnerUrl) {
    if (runnerUrl.isEmpty())
        return refuse(QStringLiteral("--runner-url is missing; give the runner endpoint, e.g. "
                                     "--runner-url http://localhost:8080/events"));
    const QString scheme = runnerUrl.scheme().toLower();
    if (!runnerUrl.isValid() ||
        (scheme != QLatin1String("http") && scheme != QLatin1String("https")))
        return refuse(QStringLiteral("--runner-url \"") % showUrl(runnerUrl) %
                      QStringLiteral("\" is not an http or https URL; use e.g. "
                                     "--runner-url http://localhost:8080/events"));
    if (runnerUrl.host().isEmpty())
        return refuse(QStringLiteral("--runner-url \"") % showUrl(runnerUrl) %
                      QStringLiteral("\" has no host; use e.g. "
                                     "--runner-url http://localhost:8080/events"));
    return {};
}

} // namespace

Result<void> DispatcherConfig::validate() const {
    // With routes each destination's own configuration checks its URL.
    if (auto url = routes ? Result<void>() : checkRunnerUrl(runnerUrl); !url)
        return url;

    for (auto check : {checkPositive("--batch-size", batchSize, "500"),
                       checkPositive("--concurrency", concurrency, "64"),
                       checkPositive("--max-attempts", maxAttempts, "10"),
                       checkPositive("--lease", lease, "30s"),
                       checkPositive("--poll-interval", pollInterval, "1s"),
                       checkPositive("--base-delay", baseDelay, "1s"),
                       checkPositive("--max-delay", maxDelay, "5m"),
                       checkPositive("--request-timeout", requestTimeout, "10s"),
                       checkPositive("--batch-max-events", batchMaxEvents, "100")}) {
        if (!check)
            return check;
    }
    if (batchMaxBytes < 1)
        return refuse(QStringLiteral("--batch-max-bytes must be at least 1 (got ") %
                      QString::number(batchMaxBytes) %
                      QStringLiteral("); use e.g. --batch-max-bytes 1048576"));
    using Bounded = std::pair<QStringView, Millis>;
    for (const auto &[flag, value] :
         {Bounded{u"--lease", lease}, Bounded{u"--poll-interval", pollInterval},
          Bounded{u"--base-delay", baseDelay}, Bounded{u"--max-delay", maxDelay},
          Bounded{u"--request-timeout", requestTimeout},
          Bounded{u"--shutdown-grace", shutdownGrace}}) {
        if (auto bounded = checkLongestSetting(flag, value); !bounded)
            return bounded;
    }
    if (maxResponseBytes < 1 || maxResponseBytes > MaxResponseBytesLimit)
        return refuse(QStringLiteral("--max-response-bytes must be from 1 to ") %
                      QString::number(MaxResponseBytesLimit) % QStringLiteral(" (got ") %
                      QString::number(maxResponseBytes) % QStringLiteral("); use e.g. ") %
                      QStringLiteral("--max-response-bytes 65536"));
    if (shutdownGrace.count() < 0)
        return refuse(QStringLiteral("--shutdown-grace must not be negative (got ") %
                      formatDuration(shutdownGrace) %
                      QStringLiteral("); use 0s to stop without waiting, or e.g. 10s"));

    // Three polls per lease: a worker that misses one wake-up still finds
    // expired leases of crashed workers well within a lease period.
    if (pollInterval > lease / 3)
        return refuse(QStringLiteral("--poll-interval (") % formatDuration(pollInterval) %
                      QStringLiteral(") must be at most a third of --lease (") %
                      formatDuration(lease) % QStringLiteral("); lower --poll-interval to ") %
                      formatDuration(lease / 3) % QStringLiteral(" or less, or raise --lease"));
    // A request still running when the lease ends could be delivered twice
    // at once by another worker.
    if (requestTimeout >= lease)
        return refuse(QStringLiteral("--request-timeout (") % formatDuration(requestTimeout) %
                      QStringLiteral(") must be shorter than --lease (") % formatDuration(lease) %
                      QStringLiteral("); lower --request-timeout or raise --lease"));
    if (baseDelay > maxDelay)
        return refuse(QStringLiteral("--base-delay (") % formatDuration(baseDelay) %
                      QStringLiteral(") must not exceed --max-delay (") % formatDuration(maxDelay) %
                      QStringLiteral("); lower --base-delay or raise --max-delay"));

    for (int status : permanentStatuses) {
        // 2xx means delivered; below 300 or above 599 is not an HTTP error.
        if (status < 300 || status > 599)
            return refuse(QStringLiteral("--permanent-status ") % QString::number(status) %
                          QStringLiteral(" is not an HTTP error status; use a status from 300 to "
                                         "599, e.g. --permanent-status 410"));
    }

    if (const auto signer = WebhookSigner::fromSecrets(secrets); !signer)
        return refuse(signer.errorMessage());
    if (bearerToken.contains(QLatin1Char('\n')) || bearerToken.contains(QLatin1Char('\r')))
        return refuse(QStringLiteral("the bearer token contains a line break; store it on one "
                                     "line"));
    if (!caFile.isEmpty()) {
        const QFileInfo info(caFile);
        if (!info.isFile() || !info.isReadable())
            return refuse(QStringLiteral("the CA bundle \"") % caFile %
                          QStringLiteral("\" is not a readable file; give the path of a PEM "
                                         "file"));
    }
    return {};
}

QStringList DispatcherConfig::warnings(bool unsignedIntended) const {
    QStringList found;
    if (secrets.isEmpty() && !unsignedIntended)
        found << QStringLiteral("deliveries are not signed: the runner cannot tell them from "
                                "requests anyone else sends it; give the runner's secret "
                                "(--secret-file, $OUTBOX_RUNNER_SECRET or the webhook-secret "
                                "credential), or --unsigned if the runner checks nothing");
    const QString host = runnerUrl.host();
    // Traffic to the loopback interface does not leave the machine.
    const bool loopback = host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0 ||
                          host.startsWith(QLatin1String("127.")) || host == QLatin1String("::1");
    if (runnerUrl.scheme().toLower() == QLatin1String("http") && !loopback) {
        if (!bearerToken.isEmpty())
            found << QStringLiteral("the bearer token goes to ") % showUrl(runnerUrl) %
                         QStringLiteral(" over plain http, readable on the way; use an https:// "
                                        "runner URL");
        if (!runnerUrl.userInfo().isEmpty())
            found << QStringLiteral("the credentials in the runner URL go to ") %
                         showUrl(runnerUrl) %
                         QStringLiteral(" over plain http, readable on the way; use an https:// "
                                        "runner URL");
    }
    return found;
}

namespace {
constexpr EnumName<Ordering> kOrderingNames[] = {{Ordering::None, "none"},
                                                 {Ordering::Aggregate, "aggregate"}};
} // namespace

QString orderingName(Ordering ordering) {
    return nameOf(kOrderingNames, ordering);
}

std::optional<Ordering> orderingNamed(QStringView name) {
    return valueNamed(kOrderingNames, name);
}

int DispatcherConfig::eventsInFlightLimit() const {
    if (delivery != Delivery::Batch)
        return concurrency;
    return int(std::min<qint64>(qint64(concurrency) * std::max(batchMaxEvents, 1), INT_MAX));
}

LogLine DispatcherConfig::logFields() const {
    QStringList statuses;
    for (int status : permanentStatuses)
        statuses << QString::number(status);
    LogLine fields;
    if (routes)
        fields.add("routes", routesFile);
    else
        fields.add("runner-url", showUrl(runnerUrl));
    fields.add("batch-size", batchSize)
        .add("concurrency", concurrency)
        .add("lease", formatDuration(lease))
        .add("poll-interval", formatDuration(pollInterval))
        .add("max-attempts", maxAttempts)
        .add("base-delay", formatDuration(baseDelay))
        .add("max-delay", formatDuration(maxDelay))
        .add("request-timeout", formatDuration(requestTimeout))
        .add("shutdown-grace", formatDuration(shutdownGrace))
        .add("max-response-bytes", maxResponseBytes)
        .add("permanent-status",
             statuses.isEmpty() ? QStringLiteral("none") : statuses.join(QLatin1Char(',')))
        .add("delivery", deliveryName(delivery));
    if (delivery == Delivery::Batch)
        fields.add("batch-max-events", batchMaxEvents).add("batch-max-bytes", batchMaxBytes);
    fields.add("ordering", orderingName(ordering))
        .add("namespace", nameSpace.isEmpty() ? QStringLiteral("(all)") : nameSpace)
        .add("worker-id", workerId.isNull() ? QStringLiteral("(generated)") : uuidText(workerId))
        // Only whether and how many: never the values.
        .add("signing", secrets.isEmpty()
                            ? QStringLiteral("off")
                            : QString(QStringLiteral("on(") % QString::number(secrets.size()) %
                                      (secrets.size() == 1 ? QStringLiteral(" secret)")
                                                           : QStringLiteral(" secrets)"))))
        .add("bearer-token", bearerToken.isEmpty() ? QLatin1String("off") : QLatin1String("on"));
    if (!caFile.isEmpty())
        fields.add("ca-file", caFile);
    return fields;
}

QString DispatcherConfig::describe() const {
    return logFields().text();
}

} // namespace outbox::core
