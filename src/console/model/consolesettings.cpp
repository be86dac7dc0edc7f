#include "console/model/consolesettings.h"

#include <QCoreApplication>
#include <QSettings>

#include <algorithm>

namespace outbox::console {

namespace {

constexpr std::chrono::milliseconds kMinInterval{500};
constexpr std::chrono::milliseconds kMaxInterval{600000};

// QSettings treats '/' as a separator; keep each profile one group.
QString groupName(const QString &name) {
    QString key = name;
    key.replace(QLatin1Char('/'), QLatin1Char('_'));
    return key;
}

QString profileGroup(const QString &name) {
    return QStringLiteral("profiles/") + groupName(name);
}

// The docks' layout of a profile ("default" without one).
QString layoutKey(const QString &profile) {
    return QStringLiteral("layouts/") +
           groupName(profile.isEmpty() ? QStringLiteral("default") : profile) +
           QStringLiteral("/state");
}

} // namespace

core::Result<core::ConnInfo> ConnectionProfile::toConnInfo() const {
    if (!connInfo.trimmed().isEmpty()) {
        return core::ConnInfo::parse(connInfo);
    }
    core::ConnInfo info;
    info.host = host.trimmed();
    info.port = port;
    info.dbname = database.trimmed();
    info.user = user.trimmed();
    info.sslmode = sslMode.trimmed();
    return info;
}

ConnectionProfile ConnectionProfile::fromConnInfo(const QString &name, const core::ConnInfo &info) {
    ConnectionProfile profile;
    profile.name = name;
    const bool onlyFields = info.options.isEmpty();
    if (onlyFields) {
        profile.host = info.host;
        profile.port = info.port;
        profile.database = info.dbname;
        profile.user = info.user;
        profile.sslMode = info.sslmode;
    } else {
        core::ConnInfo copy = info;
        copy.password.clear();
        profile.connInfo = copy.toKeyValue();
    }
    return profile;
}

QString connInfoWithoutPassword(const QString &text) {
    auto parsed = core::ConnInfo::parse(text);
    if (!parsed) {
        return {};
    }
    core::ConnInfo info = parsed.value();
    info.password.clear();
    info.options.removeIf(
        [](const auto &option) { return option.first == QLatin1String("sslpassword"); });
    return info.toKeyValue();
}

ConsoleSettings::ConsoleSettings(QSettings *settings)
    : m_settings(settings) {}

QByteArray ConsoleSettings::windowGeometry() const {
    return m_settings->value(QStringLiteral("window/geometry")).toByteArray();
}

void ConsoleSettings::setWindowGeometry(const QByteArray &geometry) {
    m_settings->setValue(QStringLiteral("window/geometry"), geometry);
}

QByteArray ConsoleSettings::windowState(const QString &profile) const {
    return m_settings->value(layoutKey(profile)).toByteArray();
}

void ConsoleSettings::setWindowState(const QString &profile, const QByteArray &state) {
    m_settings->setValue(layoutKey(profile), state);
}

QByteArray ConsoleSettings::headerState(const QString &viewKey) const {
    return m_settings->value(QStringLiteral("views/") + viewKey + QStringLiteral("/header"))
        .toByteArray();
}

void ConsoleSettings::setHeaderState(const QString &viewKey, const QByteArray &state) {
    m_settings->setValue(QStringLiteral("views/") + viewKey + QStringLiteral("/header"), state);
}

std::chrono::milliseconds ConsoleSettings::refreshInterval() const {
    const qint64 ms = m_settings->value(QStringLiteral("live/intervalMs"), 2000).toLongLong();
    return std::clamp(std::chrono::milliseconds(ms), kMinInterval, kMaxInterval);
}

void ConsoleSettings::setRefreshInterval(std::chrono::milliseconds interval) {
    m_settings->setValue(QStringLiteral("live/intervalMs"),
                         qint64(std::clamp(interval, kMinInterval, kMaxInterval).count()));
}

bool ConsoleSettings::liveEnabled() const {
    return m_settings->value(QStringLiteral("live/enabled"), true).toBool();
}

void ConsoleSettings::setLiveEnabled(bool live) {
    m_settings->setValue(QStringLiteral("live/enabled"), live);
}

QList<ConnectionProfile> ConsoleSettings::profiles() const {
    QList<ConnectionProfile> result;
    m_settings->beginGroup(QStringLiteral("profiles"));
    const QStringList groups = m_settings->childGroups();
    m_settings->endGroup();
    for (const QString &group : groups) {
        m_settings->beginGroup(QStringLiteral("profiles/") + group);
        ConnectionProfile p;
        p.name = m_settings->value(QStringLiteral("name"), group).toString();
        p.host = m_settings->value(QStringLiteral("host")).toString();
        p.port = m_settings->value(QStringLiteral("port"), 0).toInt();
        p.database = m_settings->value(QStringLiteral("database")).toString();
        p.user = m_settings->value(QStringLiteral("user")).toString();
        p.sslMode = m_settings->value(QStringLiteral("sslmode")).toString();
        p.connInfo = m_settings->value(QStringLiteral("conninfo")).toString();
        p.traceUrlTemplate = m_settings->value(QStringLiteral("traceUrlTemplate")).toString();
        m_settings->endGroup();
        result.append(p);
    }
    std::sort(result.begin(), result.end(),
              [](const auto &a, const auto &b) { return a.name.localeAwareCompare(b.name) < 0; });
    return result;
}

std::optional<ConnectionProfile> ConsoleSettings::profile(const QString &name) const {
    const auto all = profiles();
    const auto it = std::find_if(all.cbegin(), all.cend(),
                                 [&](const ConnectionProfile &p) { return p.name == name; });
    if (it == all.cend()) {
        return std::nullopt;
    }
    return *it;
}

void ConsoleSettings::saveProfile(const ConnectionProfile &profile) {
    m_settings->remove(profileGroup(profile.name));
    m_settings->beginGroup(profileGroup(profile.name));
    m_settings->setValue(QStringLiteral("name"), profile.name);
    m_settings->setValue(QStringLiteral("host"), profile.host);
    m_settings->setValue(QStringLiteral("port"), profile.port);
    m_settings->setValue(QStringLiteral("database"), profile.database);
    m_settings->setValue(QStringLiteral("user"), profile.user);
    m_settings->setValue(QStringLiteral("sslmode"), profile.sslMode);
    m_settings->setValue(QStringLiteral("conninfo"),
                         profile.connInfo.trimmed().isEmpty()
                             ? QString()
                             : connInfoWithoutPassword(profile.connInfo));
    m_settings->setValue(QStringLiteral("traceUrlTemplate"), profile.traceUrlTemplate.trimmed());
    m_settings->endGroup();
}

namespace {
const QString kTraceIdPlaceholder = QStringLiteral("{trace_id}");
} // namespace

QString traceUrlTemplateProblem(const QString &urlTemplate) {
    const QString text = urlTemplate.trimmed();
    if (text.isEmpty())
        return {};
    const QString example = QStringLiteral("https://jaeger.local/trace/{trace_id}");
    if (!text.contains(kTraceIdPlaceholder))
        return QCoreApplication::translate("ConsoleSettings",
                                           "the trace viewer URL has no {trace_id}: write where "
                                           "the trace id goes, e.g. %1")
            .arg(example);
    const QUrl url(QString(text).replace(kTraceIdPlaceholder, QString(32, QLatin1Char('0'))),
                   QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || url.host().isEmpty() ||
        (scheme != QLatin1String("http") && scheme != QLatin1String("https")))
        return QCoreApplication::translate("ConsoleSettings",
                                           "the trace viewer URL must be an http or https URL, "
                                           "e.g. %1")
            .arg(example);
    return {};
}

QUrl traceViewerUrl(const QString &urlTemplate, const QString &traceId) {
    if (traceId.isEmpty() || urlTemplate.trimmed().isEmpty() ||
        !traceUrlTemplateProblem(urlTemplate).isEmpty())
        return {};
    // A trace id is hex digits only: nothing in it needs escaping.
    return QUrl(urlTemplate.trimmed().replace(kTraceIdPlaceholder, traceId), QUrl::StrictMode);
}

void ConsoleSettings::removeProfile(const QString &name) {
    m_settings->remove(profileGroup(name));
}

QString ConsoleSettings::lastProfile() const {
    return m_settings->value(QStringLiteral("connection/lastProfile")).toString();
}

void ConsoleSettings::setLastProfile(const QString &name) {
    m_settings->setValue(QStringLiteral("connection/lastProfile"), name);
}

void ConsoleSettings::sync() {
    m_settings->sync();
}

} // namespace outbox::console
