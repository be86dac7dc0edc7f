#include "console/model/databasesettings.h"

#include <QSettings>
#include <QUrl>

#include <algorithm>

namespace outbox::console {

DatabaseSettings::DatabaseSettings(QSettings *settings, QString key)
    : m_settings(settings)
    , m_key(std::move(key)) {}

QString DatabaseSettings::keyFor(const core::ConnInfo &info) {
    const QString host = info.host.isEmpty() ? QStringLiteral("localhost") : info.host;
    const int port = info.port > 0 ? info.port : 5432;
    const QString db = info.dbname.isEmpty() ? info.user : info.dbname;
    return host + QLatin1Char(':') + QString::number(port) + QLatin1Char('/') + db;
}

QString DatabaseSettings::path(const QString &name) const {
    // QSettings treats '/' and '\' as group separators: percent-encode the
    // key so a socket directory stays one group.
    const QString group =
        QString::fromLatin1(QUrl::toPercentEncoding(m_key, {}, QByteArrayLiteral("/\\")));
    return QStringLiteral("databases/") + group + QLatin1Char('/') + name;
}

void DatabaseSettings::forget() {
    if (!m_settings || m_key.isEmpty())
        return;
    QString group = path(QString());
    group.chop(1); // the trailing '/'
    m_settings->remove(group);
}

double DatabaseSettings::requeueRate() const {
    if (!m_settings || m_key.isEmpty()) {
        return kDefaultRequeueRate;
    }
    return std::max(
        0.0,
        m_settings->value(path(QStringLiteral("requeueRate")), kDefaultRequeueRate).toDouble());
}

void DatabaseSettings::setRequeueRate(double rate) {
    if (m_settings && !m_key.isEmpty()) {
        m_settings->setValue(path(QStringLiteral("requeueRate")), std::max(0.0, rate));
    }
}

AlertThresholds DatabaseSettings::alertThresholds() const {
    AlertThresholds t;
    if (!m_settings || m_key.isEmpty()) {
        return t;
    }
    const auto seconds = [this](const char *name, std::chrono::seconds fallback) {
        const qint64 v =
            m_settings->value(path(QLatin1String(name)), qint64(fallback.count())).toLongLong();
        return std::chrono::seconds(std::max<qint64>(0, v));
    };
    t.oldestDueAge = seconds("alerts/oldestDueSeconds", t.oldestDueAge);
    t.oldestDueFor = seconds("alerts/oldestDueForSeconds", t.oldestDueFor);
    t.unclaimedFor = seconds("alerts/unclaimedSeconds", t.unclaimedFor);
    t.deathsPerMinute = std::max(
        0.0, m_settings->value(path(QStringLiteral("alerts/deathsPerMinute")), t.deathsPerMinute)
                 .toDouble());
    t.connectionLost =
        m_settings->value(path(QStringLiteral("alerts/connectionLost")), t.connectionLost).toBool();
    t.notify = m_settings->value(path(QStringLiteral("alerts/notify")), t.notify).toBool();
    return t;
}

void DatabaseSettings::setAlertThresholds(const AlertThresholds &t) {
    if (!m_settings || m_key.isEmpty()) {
        return;
    }
    m_settings->setValue(path(QStringLiteral("alerts/oldestDueSeconds")),
                         qint64(t.oldestDueAge.count()));
    m_settings->setValue(path(QStringLiteral("alerts/oldestDueForSeconds")),
                         qint64(t.oldestDueFor.count()));
    m_settings->setValue(path(QStringLiteral("alerts/unclaimedSeconds")),
                         qint64(t.unclaimedFor.count()));
    m_settings->setValue(path(QStringLiteral("alerts/deathsPerMinute")),
                         std::max(0.0, t.deathsPerMinute));
    m_settings->setValue(path(QStringLiteral("alerts/connectionLost")), t.connectionLost);
    m_settings->setValue(path(QStringLiteral("alerts/notify")), t.notify);
}

} // namespace outbox::console
