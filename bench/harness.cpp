#include "bench/harness.h"

#include "bench/report.h"
#include "store/database.h"
#include "store/migrator.h"

#include <QFile>
#include <QList>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace outbox::bench {

namespace {

QByteArray procLine(const QString &path, const QByteArray &prefix) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QList<QByteArray> lines = file.readAll().split('\n');
    for (const QByteArray &line : lines) {
        if (line.startsWith(prefix))
            return line.mid(line.indexOf(':') + 1).simplified();
    }
    return {};
}

double statusFieldMb(const QByteArray &field) {
    // "VmRSS:     12345 kB"
    return procLine(QStringLiteral("/proc/self/status"), field).split(' ').first().toDouble() /
           1024.0;
}

} // namespace

core::Error failure(const QString &message) {
    return core::Error{core::ErrorKind::Failed, message};
}

double residentMb() {
    return statusFieldMb("VmRSS:");
}

double peakResidentMb() {
    return statusFieldMb("VmHWM:");
}

QString loadAverage() {
    QFile file(QStringLiteral("/proc/loadavg"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromLatin1(file.readAll()).section(QLatin1Char(' '), 0, 2);
}

QString cpuModel() {
    return QString::fromUtf8(procLine(QStringLiteral("/proc/cpuinfo"), "model name"));
}

qint64 steadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double median(QList<double> values) {
    if (values.isEmpty())
        return 0.0;
    std::sort(values.begin(), values.end());
    const qsizetype middle = values.size() / 2;
    return values.size() % 2 ? values.at(middle) : (values.at(middle - 1) + values.at(middle)) / 2;
}

double percentile(QList<double> samples, double q) {
    if (samples.isEmpty())
        return -1;
    std::sort(samples.begin(), samples.end());
    const auto rank = qsizetype(std::ceil(q * double(samples.size())));
    return samples.at(std::clamp<qsizetype>(rank - 1, 0, samples.size() - 1));
}

BenchCluster::BenchCluster() = default;

BenchCluster::~BenchCluster() {
    m_sql = store::BenchQueries();
    m_db = QSqlDatabase();
    if (!m_connectionName.isEmpty())
        store::closeDatabase(m_connectionName);
}

core::Result<void> BenchCluster::start(const devtools::EmbeddedPostgres::Options &options) {
    if (auto started = m_cluster.start(options); !started)
        return started;
    auto info = core::ConnInfo::parse(m_cluster.connInfo());
    if (!info)
        return info.error();
    m_connInfo = info.value();
    m_connectionName = store::uniqueConnectionName(QStringLiteral("bench-admin"));
    auto db = store::openDatabase(m_connInfo, m_connectionName);
    if (!db)
        return db.error();
    m_db = db.value();
    m_sql = store::BenchQueries(m_db);
    if (auto migrated = store::Migrator(m_db).migrate(); !migrated)
        return migrated.error();
    if (auto version = m_sql.serverVersion())
        m_serverVersion = version.value();
    return {};
}

void Producer::start() {
    if (!m_thread.joinable())
        m_thread = std::thread([this] { run(); });
}

void Producer::stop() {
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
}

void Producer::run() {
    const QString name = store::uniqueConnectionName(QStringLiteral("bench-producer"));
    if (auto db = store::openDatabase(m_info, name); !db) {
        m_lastError = db.errorMessage();
    } else {
        store::BenchQueries sql(db.value());
        // A fixed schedule: a tick that ran late is not made up with a burst.
        auto next = std::chrono::steady_clock::now();
        for (qint64 tick = 0; !m_stop && (m_limit < 0 || m_produced < m_limit); ++tick) {
            auto events = sql.produce(m_batch, tick);
            if (events) {
                m_events.append(events.value());
                m_produced += events->size();
            } else if (m_lastError.isEmpty()) {
                // The first error is the one to report; later ticks may recover.
                m_lastError = events.errorMessage();
            }
            next = std::max(next + m_interval, std::chrono::steady_clock::now());
            std::this_thread::sleep_until(next);
        }
    }
    store::closeDatabase(name);
}

} // namespace outbox::bench
