#include "devtools/demo/demoproducer.h"

#include "console/model/consoletypes.h"
#include "core/uuidtext.h"

#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

namespace outbox::console {

namespace {

constexpr int TickMs = 100;
constexpr int TenantCount = 5;
constexpr double MaxRate = 1000.0;

struct TopicWeight {
    const char *nameSpace;
    const char *topic;
    int weight;
};

// The steady mix; the poison topic is added with DemoProducer::PoisonPercent.
constexpr TopicWeight Mix[] = {
    {"billing", "invoice.created", 15}, {"billing", "invoice.paid", 14},
    {"shipping", "parcel.sent", 15},    {"shipping", "parcel.delivered", 12},
    {"shipping", "label.printed", 8},   {"users", "user.created", 12},
    {"users", "user.email_changed", 9}, {"users", "session.started", 12},
};

const char *const Cities[][2] = {{"Berlin", "DE"}, {"Lyon", "FR"},  {"Porto", "PT"},
                                 {"Leeds", "GB"},  {"Turin", "IT"}, {"Gdańsk", "PL"}};
const char *const Carriers[] = {"DHL", "UPS", "GLS", "DPD", "PostNL"};
const char *const Names[] = {"alice", "bob", "chen", "dana", "emeka", "farah", "goran", "hana"};
const char *const Plans[] = {"free", "team", "pro", "enterprise"};
const char *const Products[] = {"Seat licence", "Storage 100 GB", "Support plan", "API calls 1M"};

template <typename T, std::size_t N> const T &pick(QRandomGenerator &rng, const T (&items)[N]) {
    return items[rng.bounded(int(N))];
}

QString isoNow() {
    return QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs);
}

} // namespace

DemoProducer::DemoProducer(core::ConnInfo connInfo, QString poisonNamespace, QString poisonTopic,
                           QObject *parent)
    : QObject(parent)
    , m_poisonNamespace(std::move(poisonNamespace))
    , m_poisonTopic(std::move(poisonTopic))
    , m_session(std::move(connInfo), {.applicationName = QStringLiteral("outbox-demo-producer")})
    , m_timer(this) // a child, so it moves to the worker thread with the producer
    , m_rng(QRandomGenerator::securelySeeded()) {
    for (int i = 0; i < TenantCount; ++i)
        m_tenants.append(QUuid::createUuid());
    m_timer.setInterval(TickMs);
    connect(&m_timer, &QTimer::timeout, this, &DemoProducer::tick);
}

DemoProducer::~DemoProducer() {
    dropConnection();
}

void DemoProducer::start(double eventsPerSecond, bool paused) {
    setRate(eventsPerSecond);
    m_paused = paused;
    m_carry = 0.0;
    m_clock.start();
    ensureConnection();
    m_timer.start();
}

void DemoProducer::stop() {
    m_timer.stop();
    dropConnection();
}

void DemoProducer::setRate(double eventsPerSecond) {
    m_rate = std::clamp(eventsPerSecond, 0.0, MaxRate);
}

void DemoProducer::setPaused(bool paused) {
    m_paused = paused;
    m_carry = 0.0;
}

bool DemoProducer::ensureConnection() {
    if (m_store)
        return true;
    if (const auto opened = m_session.open(); !opened) {
        reportError(
            tr("The demo producer cannot reach the database: %1").arg(opened.errorMessage()));
        return false;
    }
    m_store = std::make_unique<store::OutboxStore>(m_session);
    m_lastError.clear();
    return true;
}

void DemoProducer::dropConnection() {
    m_store.reset();
    m_session.close();
}

void DemoProducer::reportError(const QString &message) {
    if (message == m_lastError)
        return;
    m_lastError = message;
    qCWarning(lcConsole).noquote() << message;
    Q_EMIT error(message);
}

void DemoProducer::tick() {
    const double seconds = double(m_clock.restart()) / 1000.0;
    if (m_paused || m_rate <= 0.0)
        return;
    // A stalled thread does not make up for lost time in one burst.
    m_carry = std::min(m_carry + m_rate * seconds, std::max(1.0, m_rate));
    const int count = int(m_carry);
    if (count == 0 || !ensureConnection())
        return;
    m_carry -= count;

    qint64 inserted = 0;
    const auto done = store::inTransaction(
        m_session, QStringLiteral("demo producer"), [&]() -> core::Result<void> {
            for (int i = 0; i < count; ++i) {
                const bool duplicate = m_lastDeduped && m_rng.bounded(100) < 2;
                const store::EnqueueRequest request = duplicate ? *m_lastDeduped : nextEvent();
                const auto result = m_store->enqueue(request);
                if (!result)
                    return result.error();
                if (result->inserted)
                    ++inserted;
                if (request.dedupeKey)
                    m_lastDeduped = request;
            }
            return {};
        });
    if (!done) {
        reportError(tr("The demo producer could not enqueue: %1").arg(done.errorMessage()));
        if (!m_session.isOpen() || done.error().kind == core::ErrorKind::Unavailable)
            dropConnection(); // reopened on the next tick
        return;
    }
    m_lastError.clear();
    if (inserted > 0) {
        m_total += inserted;
        Q_EMIT produced(m_total);
    }
}

store::EnqueueRequest DemoProducer::nextEvent() {
    ++m_sequence;
    store::EnqueueRequest request;
    QJsonObject payload;
    const QUuid tenant = m_tenants.at(m_rng.bounded(int(m_tenants.size())));
    const QString tenantText = core::uuidText(tenant);
    const QString sequence = QStringLiteral("%1").arg(m_sequence, 6, 10, QLatin1Char('0'));

    if (m_rng.bounded(100) < PoisonPercent) {
        request.nameSpace = m_poisonNamespace;
        request.topic = m_poisonTopic;
        request.tenantId = tenant;
        request.aggregateType = QStringLiteral("invoice");
        request.aggregateId = QStringLiteral("inv_") + sequence;
        payload = QJsonObject{
            {QStringLiteral("invoice_id"), QString(QStringLiteral("inv_") + sequence)},
            {QStringLiteral("format"), QStringLiteral("csv-v1")},
            {QStringLiteral("destination"), QStringLiteral("ftp://legacy-erp.internal/in")},
            {QStringLiteral("requested_at"), isoNow()}};
        request.payload = QJsonDocument(payload).toJson(QJsonDocument::Compact);
        return request;
    }

    int total = 0;
    for (const TopicWeight &entry : Mix)
        total += entry.weight;
    int roll = m_rng.bounded(total);
    const TopicWeight *chosen = &Mix[0];
    for (const TopicWeight &entry : Mix) {
        if (roll < entry.weight) {
            chosen = &entry;
            break;
        }
        roll -= entry.weight;
    }
    request.nameSpace = QLatin1String(chosen->nameSpace);
    request.topic = QLatin1String(chosen->topic);
    const QString topic = request.topic;

    if (request.nameSpace == QLatin1String("billing")) {
        const QString invoice = QStringLiteral("inv_") + sequence;
        const int lines = 1 + m_rng.bounded(3);
        QJsonArray items;
        qint64 amount = 0;
        for (int i = 0; i < lines; ++i) {
            const int quantity = 1 + m_rng.bounded(5);
            const int unit = 500 + m_rng.bounded(20000);
            amount += qint64(quantity) * unit;
            items.append(
                QJsonObject{{QStringLiteral("product"), QLatin1String(pick(m_rng, Products))},
                            {QStringLiteral("quantity"), quantity},
                            {QStringLiteral("unit_amount_cents"), unit}});
        }
        payload =
            QJsonObject{{QStringLiteral("invoice_id"), invoice},
                        {QStringLiteral("customer_id"),
                         QStringLiteral("cus_%1").arg(m_rng.bounded(1000, 9999))},
                        {QStringLiteral("amount_cents"), amount},
                        {QStringLiteral("currency"),
                         m_rng.bounded(4) == 0 ? QStringLiteral("USD") : QStringLiteral("EUR")},
                        {QStringLiteral("lines"), items}};
        payload.insert(topic == QLatin1String("invoice.paid") ? QStringLiteral("paid_at")
                                                              : QStringLiteral("issued_at"),
                       isoNow());
        request.tenantId = tenant;
        request.aggregateType = QStringLiteral("invoice");
        request.aggregateId = invoice;
        // modkit §1.6: a tenant's dedupe key starts with the tenant id.
        request.dedupeKey = tenantText + QLatin1Char('/') + invoice + QLatin1Char('/') + topic;
    } else if (request.nameSpace == QLatin1String("shipping")) {
        const QString parcel = QStringLiteral("prc_") + sequence;
        const auto &city = pick(m_rng, Cities);
        payload = {
            {QStringLiteral("parcel_id"), parcel},
            {QStringLiteral("order_id"), QStringLiteral("ord_%1").arg(m_rng.bounded(100000))},
            {QStringLiteral("carrier"), QLatin1String(pick(m_rng, Carriers))},
            {QStringLiteral("tracking_number"),
             QStringLiteral("TRK%1").arg(m_rng.bounded(100000000, 999999999))},
            {QStringLiteral("destination"),
             QJsonObject{{QStringLiteral("city"), QString::fromUtf8(city[0])},
                         {QStringLiteral("country"), QLatin1String(city[1])}}},
            {QStringLiteral("weight_grams"), 100 + m_rng.bounded(20000)},
            {QStringLiteral("at"), isoNow()}};
        request.aggregateType = QStringLiteral("parcel");
        request.aggregateId = parcel;
        if (topic != QLatin1String("label.printed"))
            request.dedupeKey = parcel + QLatin1Char('/') + topic;
    } else {
        const QString user = QStringLiteral("usr_") + sequence;
        const QString name = QLatin1String(pick(m_rng, Names));
        payload = QJsonObject{{QStringLiteral("user_id"), user},
                              {QStringLiteral("email"),
                               QStringLiteral("%1.%2@example.com").arg(name).arg(m_sequence)},
                              {QStringLiteral("at"), isoNow()}};
        if (topic == QLatin1String("user.created")) {
            payload.insert(QStringLiteral("plan"), QLatin1String(pick(m_rng, Plans)));
            payload.insert(QStringLiteral("signup_source"), m_rng.bounded(3) == 0
                                                                ? QStringLiteral("mobile")
                                                                : QStringLiteral("web"));
        } else if (topic == QLatin1String("session.started")) {
            payload.insert(QStringLiteral("ip"),
                           QStringLiteral("203.0.113.%1").arg(m_rng.bounded(1, 255)));
            payload.insert(QStringLiteral("user_agent"),
                           QStringLiteral("Mozilla/5.0 (X11; Linux x86_64)"));
        }
        // Half of the users belong to a tenant (B2B accounts).
        if (m_rng.bounded(2) == 0)
            request.tenantId = tenant;
        request.aggregateType = QStringLiteral("user");
        request.aggregateId = user;
    }
    request.payload = QJsonDocument(payload).toJson(QJsonDocument::Compact);
    return request;
}

} // namespace outbox::console
