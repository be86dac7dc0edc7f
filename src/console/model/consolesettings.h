#pragma once

#include "core/conninfo.h"
#include "core/result.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QUrl>

#include <chrono>
#include <optional>

class QSettings;

namespace outbox::console {

// A saved connection: either fields or a conninfo/URI string. Never holds a
// password: passwords come from .pgpass/libpq or are asked at connect time
// and kept in memory only.
struct ConnectionProfile {
    QString name;
    QString host;
    int port = 0;
    QString database;
    QString user;
    QString sslMode;
    QString connInfo; // when set, used instead of the fields
    // Where this database's traces are looked at, with {trace_id} where the
    // trace id goes, e.g. https://jaeger.local/trace/{trace_id}; empty: none.
    QString traceUrlTemplate;

    core::Result<core::ConnInfo> toConnInfo() const;
    // Fills the fields from `info`, dropping any password.
    static ConnectionProfile fromConnInfo(const QString &name, const core::ConnInfo &info);
    friend bool operator==(const ConnectionProfile &, const ConnectionProfile &) = default;
};

// The console's preferences in QSettings: window layout, column layout per
// view, refresh tick, connection profiles. Takes the QSettings to use so
// tests can point it at a temporary file.
class ConsoleSettings final {
public:
    explicit ConsoleSettings(QSettings *settings);
    Q_DISABLE_COPY_MOVE(ConsoleSettings)

    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray &geometry);
    // The docks' layout, per connection profile (empty: no profile).
    QByteArray windowState(const QString &profile) const;
    void setWindowState(const QString &profile, const QByteArray &state);

    QByteArray headerState(const QString &viewKey) const;
    void setHeaderState(const QString &viewKey, const QByteArray &state);

    std::chrono::milliseconds refreshInterval() const; // default 2 s, clamped to [0.5 s, 10 min]
    void setRefreshInterval(std::chrono::milliseconds interval);
    bool liveEnabled() const; // default true
    void setLiveEnabled(bool live);

    QList<ConnectionProfile> profiles() const;
    std::optional<ConnectionProfile> profile(const QString &name) const;
    // Adds or replaces the profile with that name. A password inside a
    // conninfo string is removed before it is written.
    void saveProfile(const ConnectionProfile &profile);
    void removeProfile(const QString &name);
    QString lastProfile() const;
    void setLastProfile(const QString &name);

    void sync();
    // For parts that keep their own group (the dispatcher panel).
    QSettings *qsettings() const { return m_settings; }

private:
    QSettings *m_settings;
};

// What is wrong with a trace viewer URL template (an http or https URL with
// {trace_id} in it), with the fix; empty when it is fine or empty.
QString traceUrlTemplateProblem(const QString &urlTemplate);
// The trace viewer's page of `traceId`; invalid without a usable template or
// trace id.
QUrl traceViewerUrl(const QString &urlTemplate, const QString &traceId);

// `text` with any password (key=value or URI) removed; empty when it does
// not parse.
QString connInfoWithoutPassword(const QString &text);

} // namespace outbox::console
