#include "core/conninfo.h"

#include "core/conninfoparser.h"

#include <QByteArray>
#include <QStringList>
#include <QtGlobal>

#include <algorithm>

namespace outbox::core {

namespace {

// Keys whose values are secrets and must never be shown.
bool isSecretKey(QStringView key) {
    return key == QLatin1String("password") || key == QLatin1String("sslpassword");
}

QString quoted(const QString &value) {
    const bool needsQuotes =
        value.isEmpty() || std::any_of(value.begin(), value.end(), [](QChar c) {
            return detail::isConnInfoSpace(c) || c == QLatin1Char('\'') || c == QLatin1Char('\\');
        });
    if (!needsQuotes)
        return value;
    QString escaped = value;
    escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    escaped.replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') % escaped % QLatin1Char('\'');
}

enum class Render { Full, Redacted, QtOptions };

QString render(const ConnInfo &info, Render mode) {
    QStringList parts;
    const auto add = [&](const QString &key, const QString &value) {
        if (mode == Render::Redacted && isSecretKey(key))
            parts << key % QStringLiteral("=***");
        else
            parts << key % QLatin1Char('=') % quoted(value);
    };
    if (mode != Render::QtOptions) {
        if (!info.host.isEmpty())
            add(QStringLiteral("host"), info.host);
        if (info.port != 0)
            add(QStringLiteral("port"), QString::number(info.port));
        if (!info.dbname.isEmpty())
            add(QStringLiteral("dbname"), info.dbname);
        if (!info.user.isEmpty())
            add(QStringLiteral("user"), info.user);
        if (!info.password.isEmpty())
            add(QStringLiteral("password"), info.password);
    }
    if (!info.sslmode.isEmpty())
        add(QStringLiteral("sslmode"), info.sslmode);
    for (const auto &[key, value] : info.options)
        add(key, value);
    // QPSQL turns every ';' into a space before appending the options to its
    // conninfo, so ';' is the separator it expects. A ';' inside a value
    // cannot survive that and is left for the driver to mangle.
    return parts.join(mode == Render::QtOptions ? QLatin1Char(';') : QLatin1Char(' '));
}

} // namespace

Result<ConnInfo> ConnInfo::parse(QStringView text) {
    const QStringView s = text.trimmed();
    ConnInfo info;
    Result<void> parsed;
    if (s.startsWith(QLatin1String("postgresql://")))
        parsed = detail::parseConnInfoUri(s, 13, info);
    else if (s.startsWith(QLatin1String("postgres://")))
        parsed = detail::parseConnInfoUri(s, 11, info);
    else
        parsed = detail::parseConnInfoKeyValue(s, info);
    if (!parsed) {
        QString message = parsed.errorMessage();
        // Belt and braces: whatever text an error quotes, the password as
        // read so far must not appear in it.
        if (!info.password.isEmpty())
            message.replace(info.password, QStringLiteral("***"));
        return Result<ConnInfo>::failure(parsed.errorKind(), message);
    }
    return info;
}

Result<ConnInfo> ConnInfo::fromEnvironment() {
    const QString value = qEnvironmentVariable("OUTBOX_DB");
    if (value.trimmed().isEmpty())
        return ConnInfo();
    auto parsed = parse(value);
    if (!parsed)
        return Result<ConnInfo>::failure(parsed.errorKind(),
                                         QStringLiteral("OUTBOX_DB: ") + parsed.errorMessage());
    return parsed;
}

QString ConnInfo::option(const QString &key) const {
    if (key == QLatin1String("host"))
        return host;
    if (key == QLatin1String("port"))
        return port == 0 ? QString() : QString::number(port);
    if (key == QLatin1String("dbname"))
        return dbname;
    if (key == QLatin1String("user"))
        return user;
    if (key == QLatin1String("password"))
        return password;
    if (key == QLatin1String("sslmode"))
        return sslmode;
    for (const auto &[k, v] : options) {
        if (k == key)
            return v;
    }
    return QString();
}

void ConnInfo::setOption(const QString &key, const QString &value) {
    // The named fields are the single source of truth for their keywords, so
    // that nothing is rendered twice.
    if (key == QLatin1String("host")) {
        host = value;
    } else if (key == QLatin1String("port")) {
        bool ok = false;
        const int n = value.toInt(&ok);
        port = ok && n >= 1 && n <= 65535 ? n : 0;
    } else if (key == QLatin1String("dbname")) {
        dbname = value;
    } else if (key == QLatin1String("user")) {
        user = value;
    } else if (key == QLatin1String("password")) {
        password = value;
    } else if (key == QLatin1String("sslmode")) {
        sslmode = value;
    } else {
        for (auto &[k, v] : options) {
            if (k == key) {
                v = value;
                return;
            }
        }
        options.append({key, value});
    }
}

QString ConnInfo::redacted() const {
    return render(*this, Render::Redacted);
}

QString ConnInfo::toKeyValue() const {
    return render(*this, Render::Full);
}

QString ConnInfo::qtConnectOptions() const {
    return render(*this, Render::QtOptions);
}

} // namespace outbox::core
