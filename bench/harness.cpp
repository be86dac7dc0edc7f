#include "bench/harness.h"

#include "bench/report.h"
#include "store/database.h"
#include "store/migrator.h"

#include <QDir>
#include <QFile>
#include <QList>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unistd.h>

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

// The fields of /proc/<pid>/stat after the command (the second field, which
// may contain spaces and parentheses: cut at the last ')'), so that index 0
// is field 3 (state), 1 the parent, 11 and 12 utime and stime, 13 and 14 the
// reaped children's. Empty when the process is gone.
QList<QByteArray> statFields(qint64 pid) {
    QFile file(pid > 0 ? QStringLiteral("/proc/%1/stat").arg(pid)
                       : QStringLiteral("/proc/self/stat"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray line = file.readAll();
    const qsizetype close = line.lastIndexOf(')');
    if (close < 0)
        return {};
    QList<QByteArray> fields = line.mid(close + 2).split(' ');
    if (fields.size() < 15)
        return {};
    return fields;
}

// utime + stime, in clock ticks (0 = this process).
qint64 processTicks(qint64 pid) {
    const QList<QByteArray> fields = statFields(pid);
    return fields.isEmpty() ? 0 : fields.at(11).toLongLong() + fields.at(12).toLongLong();
}

// A server and its children, those still running and those it has reaped
// (a backend or an autovacuum worker that exits moves its time into the
// server's cutime/cstime, so the sum stays steady across exits).
qint64 processTreeTicks(qint64 pid) {
    const QList<QByteArray> server = statFields(pid);
    if (server.isEmpty())
        return 0;
    qint64 ticks = server.at(11).toLongLong() + server.at(12).toLongLong() +
                   server.at(13).toLongLong() + server.at(14).toLongLong();
    const QByteArray parent = QByteArray::number(pid);
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        bool numeric = false;
        const qint64 child = entry.toLongLong(&numeric);
        if (!numeric || child == pid)
            continue;
        const QList<QByteArray> fields = statFields(child);
        if (!fields.isEmpty() && fields.at(1) == parent)
            ticks += fields.at(11).toLongLong() + fields.at(12).toLongLong();
    }
    return ticks;
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
    const QList<QByteArray> parts = file.readAll().split(' ');
    return parts.size() >= 3 ? QString::fromLatin1(parts[0] + ' ' + parts[1] + ' ' + parts[2])
                             : QString();
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

qint64 BenchCluster::serverProcessId() const {
    const QString dir = m_cluster.dataDirectory();
    QFile file(dir + QStringLiteral("/postmaster.pid"));
    if (dir.isEmpty() || !file.open(QIODevice::ReadOnly))
        return 0;
    return file.readLine().trimmed().toLongLong();
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

QJsonObject CpuUsage::perEvent(qint64 events) const {
    const double available = busySeconds + idleSeconds + stealSeconds;
    if (!valid || events <= 0 || available <= 0)
        return {};
    const auto us = [events](double seconds) { return rounded(seconds * 1e6 / double(events), 1); };
    const double rest = std::max(busySeconds - selfSeconds - runnerSeconds - databaseSeconds, 0.0);
    return QJsonObject{
        {QStringLiteral("busy_pct"), rounded(busySeconds / available * 100.0, 1)},
        {QStringLiteral("steal_pct"), rounded(stealSeconds / available * 100.0, 1)},
        {QStringLiteral("total_us_per_event"), us(busySeconds)},
        {QStringLiteral("self_us_per_event"), us(selfSeconds)},
        {QStringLiteral("runner_us_per_event"), us(runnerSeconds)},
        {QStringLiteral("database_us_per_event"), us(databaseSeconds)},
        {QStringLiteral("rest_us_per_event"), us(rest)},
    };
}

CpuMeter::CpuMeter(qint64 runnerPid, qint64 databasePid)
    : m_runnerPid(runnerPid)
    , m_databasePid(databasePid) {
    const long ticks = ::sysconf(_SC_CLK_TCK);
    m_tickSeconds = ticks > 0 ? 1.0 / double(ticks) : 0.01;
}

CpuUsage CpuMeter::sample() const {
    qint64 busy = 0, idle = 0, steal = 0;
    QFile stat(QStringLiteral("/proc/stat"));
    if (stat.open(QIODevice::ReadOnly)) {
        // "cpu  user nice system idle iowait irq softirq steal guest guest_nice";
        // guest time is already counted in user.
        const QList<QByteArray> fields = stat.readLine().simplified().split(' ');
        if (fields.size() >= 9 && fields.first() == "cpu") {
            const auto at = [&](int i) { return fields.at(i).toLongLong(); };
            busy = at(1) + at(2) + at(3) + at(6) + at(7);
            idle = at(4) + at(5);
            steal = at(8);
        }
    }
    const auto seconds = [this](qint64 ticks) { return double(ticks) * m_tickSeconds; };
    return CpuUsage{busy + idle + steal > 0,
                    seconds(busy),
                    seconds(idle),
                    seconds(steal),
                    seconds(processTicks(0)),
                    seconds(m_runnerPid > 0 ? processTicks(m_runnerPid) : 0),
                    seconds(m_databasePid > 0 ? processTreeTicks(m_databasePid) : 0)};
}

CpuUsage CpuMeter::between(const CpuUsage &from, const CpuUsage &to) {
    CpuUsage usage{false,
                   to.busySeconds - from.busySeconds,
                   to.idleSeconds - from.idleSeconds,
                   to.stealSeconds - from.stealSeconds,
                   to.selfSeconds - from.selfSeconds,
                   to.runnerSeconds - from.runnerSeconds,
                   to.databaseSeconds - from.databaseSeconds};
    usage.valid = usage.busySeconds + usage.idleSeconds + usage.stealSeconds > 0;
    return usage;
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
        while (!m_stop && (m_limit < 0 || m_produced < m_limit)) {
            auto events = sql.produce(m_batch);
            ++m_batch.tick;
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
