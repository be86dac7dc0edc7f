#include "benchutil.h"

#include <QByteArray>
#include <QFile>
#include <QList>

#include <chrono>

namespace outbox::consolebench {

namespace {

double statusFieldMb(const QByteArray &field) {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) {
        return 0.0;
    }
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith(field)) {
            // "VmHWM:     12345 kB"
            const QList<QByteArray> parts = line.simplified().split(' ');
            return parts.size() >= 2 ? parts.at(1).toDouble() / 1024.0 : 0.0;
        }
    }
    return 0.0;
}

} // namespace

core::Error failure(const QString &message) {
    return core::Error{core::ErrorKind::Failed, message};
}

qint64 steadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

double residentMb() {
    return statusFieldMb("VmRSS:");
}

double peakResidentMb() {
    return statusFieldMb("VmHWM:");
}

QString loadAverage() {
    QFile file(QStringLiteral("/proc/loadavg"));
    if (!file.open(QIODevice::ReadOnly)) {
        return {};
    }
    const QList<QByteArray> parts = file.readAll().split(' ');
    return parts.size() >= 3 ? QString::fromLatin1(parts[0] + ' ' + parts[1] + ' ' + parts[2])
                             : QString();
}
} // namespace outbox::consolebench
