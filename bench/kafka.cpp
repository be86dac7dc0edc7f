#include "bench/kafka.h"

#include "core/kafkasettings.h"
#include "devtools/kafkamock.h"
#include "dispatch/kafkapublisher.h"

#include <QJsonArray>

namespace outbox::bench {

namespace {

const QString kTopic = QStringLiteral("outbox.bench");
constexpr int KafkaWindowClaims = 4;

core::Result<QJsonObject> fail(const QString &message) {
    return core::Error{core::ErrorKind::Failed, message};
}

} // namespace

core::Result<QJsonObject> measureKafka(const BenchOptions &o,
                                       const std::function<DispatchPlan(qint64)> &plan,
                                       const std::function<core::Result<void>(int)> &load,
                                       const Progress &progress) {
    devtools::KafkaMockCluster cluster;
    if (!cluster.isRunning() || !cluster.createTopic(kTopic, 4))
        return fail(QStringLiteral("the mock Kafka cluster did not start: ") + cluster.error());
    auto settings = core::KafkaSettings::fromProperties(
        {{QStringLiteral("brokers"), cluster.bootstrapServers()},
         {QStringLiteral("topic"), kTopic}});
    if (!settings)
        return settings.error();

    QList<double> kafkaRates;
    QList<double> dbRates;
    qint64 maybeDuplicated = 0;
    for (int round = 1; round <= o.repeat; ++round) {
        for (const bool kafka : {false, true}) {
            progress(QStringLiteral("%1: %2 events%3...")
                         .arg(kafka ? QStringLiteral("kafka (mock cluster)")
                                    : QStringLiteral("kafka phase, database only"))
                         .arg(o.events)
                         .arg(o.repeat > 1 ? QStringLiteral(" (round %1)").arg(round) : QString()));
            if (auto loaded = load(o.events); !loaded)
                return loaded.error();
            DispatchPlan run = plan(o.events);
            if (kafka) {
                run.publisherFactory = [&settings]() -> std::unique_ptr<dispatch::Publisher> {
                    auto made = dispatch::makeKafkaPublisher(settings.value());
                    return made ? std::move(made).value() : nullptr;
                };
                // A produce costs little and answers late (linger, the broker's
                // acks): several claims' worth in flight keep both busy.
                run.config.concurrency = KafkaWindowClaims * o.batchSize;
            }
            auto ran = runDispatcher(run);
            if (!ran)
                return ran.error();
            const double perSecond = ran->seconds > 0 ? double(o.events) / ran->seconds : 0.0;
            (kafka ? kafkaRates : dbRates).append(perSecond);
            if (kafka)
                maybeDuplicated += ran->stats.maybeDuplicated;
        }
    }
    // The ratio of each round's pair (run back to back), then the median, as
    // the other phases report theirs.
    QList<double> ratios;
    for (qsizetype i = 0; i < kafkaRates.size(); ++i)
        ratios.append(dbRates.at(i) > 0 ? kafkaRates.at(i) / dbRates.at(i) : 0.0);
    const double kafkaRate = median(kafkaRates);
    const double dbRate = median(dbRates);
    const auto perRound = [](const QList<double> &rates) {
        QJsonArray rounded;
        for (double value : rates)
            rounded.append(qRound(value));
        return rounded;
    };
    return QJsonObject{{QStringLiteral("events"), o.events},
                       {QStringLiteral("kafka_rounds"), perRound(kafkaRates)},
                       {QStringLiteral("db_only_rounds"), perRound(dbRates)},
                       {QStringLiteral("kafka_events_per_s"), kafkaRate},
                       {QStringLiteral("db_only_events_per_s"), dbRate},
                       {QStringLiteral("ratio"), median(ratios)},
                       {QStringLiteral("maybe_duplicated"), maybeDuplicated}};
}

QList<Check> kafkaChecks(const QJsonObject &kafka) {
    if (kafka.isEmpty())
        return {};
    const double ratio = kafka.value(QLatin1String("ratio")).toDouble();
    return {{QStringLiteral("Kafka (mock cluster) / database only"), percent(ratio),
             QStringLiteral(">= 80%"), ratio >= 0.80}};
}

QList<std::pair<QString, QString>> kafkaFigures(const QJsonObject &kafka) {
    if (kafka.isEmpty())
        return {};
    const auto perSecond = [&kafka](const char *key) -> QString {
        return QString::number(kafka.value(QLatin1String(key)).toDouble(), 'f', 0) +
               QStringLiteral(" events/s");
    };
    QStringList rounds;
    const QJsonArray kafkaRounds = kafka.value(QLatin1String("kafka_rounds")).toArray();
    const QJsonArray dbRounds = kafka.value(QLatin1String("db_only_rounds")).toArray();
    for (qsizetype i = 0; i < kafkaRounds.size() && i < dbRounds.size(); ++i)
        rounds << QString::number(kafkaRounds.at(i).toInteger()) + u'/' +
                      QString::number(dbRounds.at(i).toInteger());
    return {{QStringLiteral("Kafka (mock cluster), %1 events")
                 .arg(kafka.value(QLatin1String("events")).toInteger()),
             perSecond("kafka_events_per_s")},
            {QStringLiteral("database only, same run"), perSecond("db_only_events_per_s")},
            {QStringLiteral("  events/s per round (Kafka/database only)"), rounds.join(u' ')}};
}

} // namespace outbox::bench
