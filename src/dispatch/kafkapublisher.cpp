#include "dispatch/kafkapublisher.h"

#include "core/logline.h"
#include "dispatch/kafkarecord.h"
#include "dispatch/logging.h"

#include <QSocketNotifier>

#include <array>
#include <cstdint>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

namespace outbox::dispatch {

namespace {

using Clock = std::chrono::steady_clock;

const QString kMaybeDuplicated =
    QStringLiteral("may be duplicated: consumers deduplicate on the id header");

QString errorText(rd_kafka_resp_err_t error) {
    return QString::fromUtf8(rd_kafka_err2str(error));
}

void *tokenPointer(quint64 token) {
    return reinterpret_cast<void *>(std::uintptr_t(token));
}

// librdkafka's log lines as ours (from its own threads: Qt's logging is
// thread-safe).
void logCallback(const rd_kafka_t *, int level, const char *facility, const char *text) {
    const auto line = core::LogLine("kafka_log")
                          .add("facility", QString::fromUtf8(facility))
                          .add("message", QString::fromUtf8(text));
    if (level <= 4)
        qCWarning(lcDispatch) << line;
    else
        qCDebug(lcDispatch) << line;
}

struct ConfDeleter {
    void operator()(rd_kafka_conf_t *conf) const { rd_kafka_conf_destroy(conf); }
};
using Conf = std::unique_ptr<rd_kafka_conf_t, ConfDeleter>;

core::Error invalid(const QString &message) {
    return core::Error{core::ErrorKind::Invalid, message};
}

core::Result<void> set(rd_kafka_conf_t *conf, const QString &name, const QString &value,
                       const QString &shownAs) {
    std::array<char, 512> reason{};
    if (rd_kafka_conf_set(conf, name.toUtf8().constData(), value.toUtf8().constData(),
                          reason.data(), reason.size()) == RD_KAFKA_CONF_OK)
        return {};
    return invalid(QStringLiteral("%1: %2; see librdkafka's CONFIGURATION.md for the property "
                                  "and its values")
                       .arg(shownAs, QString::fromUtf8(reason.data())));
}

// The producer's configuration without callbacks: the settings, then what the
// guarantee rests on.
core::Result<Conf> producerConf(const core::KafkaSettings &settings,
                                std::chrono::milliseconds messageTimeout) {
    Conf conf(rd_kafka_conf_new());
    if (auto done = set(conf.get(), QStringLiteral("bootstrap.servers"), settings.brokers,
                        QStringLiteral("brokers"));
        !done)
        return done.error();
    for (const auto &[name, value] : settings.properties) {
        if (auto done = set(conf.get(), name, value, QStringLiteral("kafka.") + name); !done)
            return done.error();
    }
    if (!settings.saslPassword.isEmpty()) {
        if (auto done = set(conf.get(), QStringLiteral("sasl.password"), settings.saslPassword,
                            QStringLiteral("the SASL password"));
            !done)
            return done.error();
    }
    const QList<QPair<QString, QString>> guarantee{
        {QStringLiteral("enable.idempotence"), QStringLiteral("true")},
        {QStringLiteral("acks"), QStringLiteral("all")},
        {QStringLiteral("message.timeout.ms"), QString::number(messageTimeout.count())},
    };
    for (const auto &[name, value] : guarantee) {
        if (auto done = set(conf.get(), name, value, name); !done)
            return done.error();
    }
    return conf;
}

} // namespace

KafkaPublisher::KafkaPublisher(core::KafkaSettings settings, QObject *parent)
    : Publisher(parent)
    , m_settings(std::move(settings))
    , m_tick(this)
    , m_emitTimer(this) {
    connect(&m_tick, &QTimer::timeout, this, [this] {
        serve();
        checkDeadlines();
    });
    m_emitTimer.setSingleShot(true);
    connect(&m_emitTimer, &QTimer::timeout, this, &KafkaPublisher::emitReady);
}

KafkaPublisher::~KafkaPublisher() {
    destroyProducer();
}

core::Result<std::unique_ptr<KafkaPublisher>> KafkaPublisher::create(core::KafkaSettings settings,
                                                                     QObject *parent) {
    if (auto conf = producerConf(settings, std::chrono::milliseconds(10000)); !conf)
        return conf.error();
    return std::unique_ptr<KafkaPublisher>(new KafkaPublisher(std::move(settings), parent));
}

core::Result<std::unique_ptr<Publisher>> makeKafkaPublisher(const core::KafkaSettings &settings,
                                                            QObject *parent) {
    auto made = KafkaPublisher::create(settings, parent);
    if (!made)
        return made.error();
    return std::unique_ptr<Publisher>(std::move(made).value());
}

core::Result<void> KafkaPublisher::configure(const core::DispatcherConfig &config) {
    m_config = config;
    if (m_producer)
        return {};
    if (auto made = makeProducer(); !made)
        return made;
    m_tick.start(100);
    return {};
}

core::Result<void> KafkaPublisher::makeProducer() {
    const std::chrono::milliseconds timeout = m_config.requestTimeout;
    auto conf = producerConf(m_settings, timeout);
    if (!conf)
        return conf.error();
    rd_kafka_conf_set_opaque(conf->get(), this);
    rd_kafka_conf_set_dr_msg_cb(conf->get(), &KafkaPublisher::deliveryReportCallback);
    rd_kafka_conf_set_error_cb(conf->get(), &KafkaPublisher::errorCallback);
    rd_kafka_conf_set_log_cb(conf->get(), logCallback);

    std::array<char, 512> reason{};
    rd_kafka_t *producer =
        rd_kafka_new(RD_KAFKA_PRODUCER, conf->get(), reason.data(), reason.size());
    if (!producer)
        return invalid(QStringLiteral("the Kafka producer cannot be made: %1; check the kafka.* "
                                      "properties")
                           .arg(QString::fromUtf8(reason.data())));
    (void)conf->release(); // rd_kafka_new() owns it now

    if (::pipe2(m_wakeFds, O_NONBLOCK | O_CLOEXEC) != 0) {
        rd_kafka_destroy(producer);
        return core::Error{core::ErrorKind::Failed,
                           QStringLiteral("cannot make a pipe for Kafka's delivery reports")};
    }
    m_producer = producer;
    m_producerTimeout = timeout;
    // Known before the brokers answer, a topic's metadata comes with the
    // first connection's; a topic first named by a produce waits for the
    // next periodic scan (up to a second).
    if (!m_settings.topicFromEvent)
        m_topic = rd_kafka_topic_new(producer, m_settings.topic.toUtf8().constData(), nullptr);
    m_queue = rd_kafka_queue_get_main(producer);
    static const char wakeByte = 1;
    rd_kafka_queue_io_event_enable(m_queue, m_wakeFds[1], &wakeByte, 1);
    m_wake = std::make_unique<QSocketNotifier>(m_wakeFds[0], QSocketNotifier::Read);
    connect(m_wake.get(), &QSocketNotifier::activated, this, &KafkaPublisher::serve);
    m_producerError.clear();
    m_fatal.clear();
    ++m_producersMade;
    qCInfo(lcDispatch) << core::LogLine("kafka_producer")
                              .add("settings", m_settings.describe())
                              .add("message_timeout_ms", qint64(timeout.count()))
                              .add("producers", m_producersMade);
    return {};
}

void KafkaPublisher::destroyProducer() {
    m_wake.reset();
    if (m_producer) {
        rd_kafka_queue_io_event_enable(m_queue, -1, nullptr, 0);
        rd_kafka_queue_destroy(m_queue);
        m_queue = nullptr;
        // Nothing waits for the brokers: what was in flight is answered by
        // the caller (retried, or released by the dispatcher).
        rd_kafka_purge(m_producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT |
                                       RD_KAFKA_PURGE_F_NON_BLOCKING);
        if (m_topic)
            rd_kafka_topic_destroy(m_topic);
        m_topic = nullptr;
        rd_kafka_destroy(m_producer);
        m_producer = nullptr;
    }
    for (int &fd : m_wakeFds) {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
}

void KafkaPublisher::rebuild(const QString &reason) {
    qCWarning(lcDispatch)
        << core::LogLine("kafka_producer_failed").add("in_flight", inFlight()).add("error", reason);
    destroyProducer();
    for (auto it = m_pending.begin(); it != m_pending.end(); ++it) {
        if (it->outcome)
            continue;
        PublishOutcome outcome = PublishOutcome::retry(
            it->event, QStringLiteral("the Kafka producer failed (%1) and was rebuilt; %2")
                           .arg(reason, kMaybeDuplicated));
        outcome.maybeDuplicated = true;
        decide(it.key(), std::move(outcome));
    }
    if (auto made = makeProducer(); !made)
        m_producerError = made.errorMessage();
    emitSoon();
}

void KafkaPublisher::publish(const store::ClaimedEvent &event) {
    const auto timeout = std::chrono::milliseconds(m_config.requestTimeout);
    if (m_producer && m_pending.isEmpty() && m_producerTimeout != timeout)
        destroyProducer(); // the request timeout changed; idle, so nothing is lost
    const quint64 token = m_nextToken++;
    const auto now = Clock::now();
    const auto margin = (m_config.lease - m_config.requestTimeout) / 2;
    m_pending.insert(token, Pending{event, now, now + timeout + margin, std::nullopt});

    if (!m_producer && m_producerError.isEmpty()) {
        if (auto made = makeProducer(); !made)
            m_producerError = made.errorMessage();
    }
    if (!m_producer) {
        decide(token, PublishOutcome::retry(event, QStringLiteral("no Kafka producer: ") %
                                                       m_producerError));
        m_producerError.clear(); // try again next time
        emitSoon();
        return;
    }
    auto record = kafkaRecord(m_settings, event);
    if (!record) {
        decide(token, PublishOutcome::permanent(event, record.errorMessage()));
        emitSoon();
        return;
    }
    rd_kafka_headers_t *headers = rd_kafka_headers_new(size_t(record->headers.size()));
    for (const auto &[name, value] : record->headers)
        rd_kafka_header_add(headers, name.constData(), name.size(), value.constData(),
                            value.size());
        // librdkafka's argument macros cast C-style. (Not rd_kafka_produceva():
        // 2.0.2 frees its headers twice when a produce is refused.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
    const rd_kafka_resp_err_t error =
        rd_kafka_producev(m_producer, RD_KAFKA_V_TOPIC(record->topic.constData()),
                          RD_KAFKA_V_KEY(record->key.constData(), size_t(record->key.size())),
                          RD_KAFKA_V_VALUE(const_cast<char *>(event.payload.constData()),
                                           size_t(event.payload.size())),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers),
                          RD_KAFKA_V_OPAQUE(tokenPointer(token)), RD_KAFKA_V_END);
#pragma GCC diagnostic pop
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR)
        return; // the message owns the headers now
    rd_kafka_headers_destroy(headers);
    const QString text = QStringLiteral("Kafka produce to %1 refused: %2")
                             .arg(QString::fromUtf8(record->topic), errorText(error));
    decide(token, error == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE
                      ? PublishOutcome::permanent(
                            event, text + QStringLiteral(" (raise kafka.message.max.bytes and "
                                                         "the topic's max.message.bytes)"))
                      : PublishOutcome::retry(event, text));
    if (error == RD_KAFKA_RESP_ERR__FATAL)
        m_fatal = text;
    emitSoon();
}

void KafkaPublisher::serve() {
    if (m_wakeFds[0] >= 0) {
        std::array<char, 64> drain{};
        while (::read(m_wakeFds[0], drain.data(), drain.size()) > 0) {
        }
    }
    if (m_producer)
        rd_kafka_poll(m_producer, 0); // every report waiting, none awaited
    if (!m_fatal.isEmpty()) {
        std::array<char, 512> reason{};
        const rd_kafka_resp_err_t cause =
            m_producer ? rd_kafka_fatal_error(m_producer, reason.data(), reason.size())
                       : RD_KAFKA_RESP_ERR_NO_ERROR;
        rebuild(cause != RD_KAFKA_RESP_ERR_NO_ERROR
                    ? errorText(cause) % QStringLiteral(": ") % QString::fromUtf8(reason.data())
                    : m_fatal);
    }
    emitReady();
}

void KafkaPublisher::checkDeadlines() {
    const auto now = Clock::now();
    for (auto it = m_pending.begin(); it != m_pending.end(); ++it) {
        if (it->outcome || it->deadline > now)
            continue;
        PublishOutcome outcome = PublishOutcome::retry(
            it->event,
            QStringLiteral("no delivery report from Kafka in time; ") % kMaybeDuplicated);
        outcome.maybeDuplicated = true;
        decide(it.key(), std::move(outcome));
    }
    emitReady();
}

void KafkaPublisher::deliveryReportCallback(rd_kafka_t *, const rd_kafka_message_t *message,
                                            void *opaque) {
    static_cast<KafkaPublisher *>(opaque)->onDeliveryReport(message);
}

void KafkaPublisher::errorCallback(rd_kafka_t *, int error, const char *reason, void *opaque) {
    static_cast<KafkaPublisher *>(opaque)->onError(error, reason);
}

void KafkaPublisher::onError(int error, const char *reason) {
    const QString text = QString::fromUtf8(reason);
    if (error == RD_KAFKA_RESP_ERR__FATAL) {
        m_fatal = text;
        return;
    }
    qCDebug(lcDispatch) << core::LogLine("kafka_error")
                               .add("code", errorText(rd_kafka_resp_err_t(error)))
                               .add("error", text);
}

void KafkaPublisher::onDeliveryReport(const rd_kafka_message_t *message) {
    const auto token = quint64(reinterpret_cast<std::uintptr_t>(message->_private));
    const auto it = m_pending.constFind(token);
    if (it == m_pending.cend() || it->outcome)
        return; // given up on already (deadline, rebuild)
    const store::ClaimedEvent &event = it->event;
    const rd_kafka_msg_status_t status = rd_kafka_message_status(message);
    const QString cause = errorText(message->err);
    PublishOutcome outcome;
    if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR && status == RD_KAFKA_MSG_STATUS_PERSISTED) {
        outcome = PublishOutcome::delivered(event);
        outcome.httpStatus.reset();
    } else if (message->err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE) {
        outcome = PublishOutcome::permanent(
            event, QStringLiteral("Kafka refused the record: %1 (raise the topic's "
                                  "max.message.bytes)")
                       .arg(cause));
    } else if (status == RD_KAFKA_MSG_STATUS_NOT_PERSISTED) {
        outcome = PublishOutcome::retry(event, QStringLiteral("not persisted by Kafka: ") % cause);
    } else {
        outcome = PublishOutcome::retry(
            event, QStringLiteral("Kafka did not confirm the record (%1); ").arg(cause) %
                       kMaybeDuplicated);
        outcome.maybeDuplicated = true;
    }
    decide(token, std::move(outcome));
}

void KafkaPublisher::decide(quint64 token, PublishOutcome outcome) {
    const auto it = m_pending.find(token);
    if (it == m_pending.end() || it->outcome)
        return;
    outcome.duration =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - it->started);
    it->outcome = std::move(outcome);
    m_ready.append(token);
}

void KafkaPublisher::emitSoon() {
    if (!m_emitTimer.isActive())
        m_emitTimer.start(0);
}

void KafkaPublisher::emitReady() {
    // A receiver may publish more, or abort everything, from its slot.
    const QList<quint64> ready = std::exchange(m_ready, {});
    for (quint64 token : ready) {
        const auto it = m_pending.find(token);
        if (it == m_pending.end())
            continue; // abandoned by abortAll()
        const PublishOutcome outcome = *it->outcome;
        m_pending.erase(it);
        Q_EMIT finished(outcome);
    }
}

void KafkaPublisher::abortAll() {
    m_pending.clear();
    m_ready.clear();
    m_emitTimer.stop();
    // The producer goes too, so that nothing abandoned is still produced
    // after the dispatcher has released its lease; the next publish() makes
    // another.
    destroyProducer();
}

} // namespace outbox::dispatch
