#include "bench/kafka.h"

#include "core/kafkasettings.h"
#include "devtools/kafkamock.h"
#include "dispatch/kafkapublisher.h"

namespace outbox::bench {

namespace {

const QString kTopic = QStringLiteral("outbox.bench");
constexpr int KafkaWindowClaims = 4;

} // namespace

core::Result<QJsonObject> measureKafka(const BenchOptions &o,
                                       const std::function<DispatchPlan(qint64)> &plan,
                                       const std::function<core::Result<void>(int)> &load,
                                       const Progress &progress) {
    devtools::KafkaMockCluster cluster;
    if (!cluster.isRunning() || !cluster.createTopic(kTopic, 4))
        return failure(QStringLiteral("the mock Kafka cluster did not start: ") + cluster.error());
    auto settings = core::KafkaSettings::fromProperties(
        {{QStringLiteral("brokers"), cluster.bootstrapServers()},
         {QStringLiteral("topic"), kTopic}});
    if (!settings)
        return settings.error();

    Rounds rounds;
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
            rounds[kafka ? QStringLiteral("kafka_events_per_s")
                         : QStringLiteral("db_only_events_per_s")]
                << (ran->seconds > 0 ? double(o.events) / ran->seconds : 0.0);
            if (kafka)
                maybeDuplicated += ran->stats.maybeDuplicated;
        }
        // Each round's pair ran back to back; the median of their ratios is reported.
        const double db = rounds.value(QStringLiteral("db_only_events_per_s")).last();
        rounds[QStringLiteral("ratio")]
            << (db > 0 ? rounds.value(QStringLiteral("kafka_events_per_s")).last() / db : 0.0);
    }
    QJsonObject out = roundsJson(rounds);
    out.insert(QStringLiteral("events"), o.events);
    out.insert(QStringLiteral("maybe_duplicated"), maybeDuplicated);
    return out;
}

} // namespace outbox::bench
