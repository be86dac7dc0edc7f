#include "core/conninfo.h"

#include "core/conninfocheck.h"
#include "core/conninfolibpq.h"

#include <QStringList>
#include <QtGlobal>

#include <algorithm>

namespace outbox::core {

namespace {

// libpq's idea of whitespace (isspace() in the C locale).
bool isConnInfoSpace(QChar c) {
    return c == QLatin1Char(' ') || c == QLatin1Char('\t') || c == QLatin1Char('\n') ||
           c == QLatin1Char('\r') || c == QLatin1Char('\f') || c == QLatin1Char('\v');
}

QString quoted(const QString &value) {
    QString escaped = value;
    escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    escaped.replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') % escaped % QLatin1Char('\'');
}

QString quotedIfNeeded(const QString &value) {
    const bool needsQuotes =
        value.isEmpty() || std::any_of(value.begin(), value.end(), [](QChar c) {
            return isConnInfoSpace(c) || c == QLatin1Char('\'') || c == QLatin1Char('\\');
        });
    return needsQuotes ? quoted(value) : value;
}

enum class Render { Full, Redacted, QtOptions };

QString render(const ConnInfo &info, Render mode) {
    QStringList parts;
    const auto add = [&](const QString &key, const QString &value) {
        if (mode == Render::Redacted && detail::isSecretKeyword(key))
            parts << key % QStringLiteral("=***");
        else if (mode == Render::QtOptions)
            parts << key % QLatin1Char('=') % quoted(value);
        else
            parts << key % QLatin1Char('=') % quotedIfNeeded(value);
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
    // QPSQL turns every ';' of its connect options into a space, quoted or
    // not; every value being quoted (and free of ';', see checkFields), that
    // space can only ever stand between two options.
    return parts.join(mode == Render::QtOptions ? QLatin1Char(';') : QLatin1Char(' '));
}

Error invalidString(const Error &error) {
    return {error.kind, QStringLiteral("invalid connection string: ") + error.message};
}

} // namespace

Result<ConnInfo> ConnInfo::parse(QStringView text) {
    const QString s = text.trimmed().toString();
    ConnInfo info;
    if (s.isEmpty())
        return info;
    // libpq reads a C string: whatever follows a NUL would silently vanish.
    if (s.contains(QChar(0)))
        return Error{ErrorKind::Invalid, QStringLiteral("invalid connection string: it contains "
                                                        "a NUL character; remove it")};
    const detail::Disclosure disclosure(s);
    const bool uri = detail::isUri(s);
    if (uri) {
        const auto credentials = detail::checkUriCredentials(s);
        if (!credentials)
            return invalidString(credentials.error());
    }
    const auto pairs = detail::parseWithLibpq(s, disclosure);
    if (!pairs)
        return invalidString(pairs.error());
    for (const auto &[key, value] : pairs.value()) {
        if (key == QLatin1String("port")) {
            const auto port = detail::portNumber(value, uri, disclosure);
            if (!port)
                return invalidString(port.error());
            info.port = port.value();
        } else {
            info.setOption(key, value);
        }
    }
    const auto checked = detail::checkFields(info, disclosure);
    if (!checked)
        return invalidString(checked.error());
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

Result<QString> ConnInfo::qtConnectOptions() const {
    const auto checked = detail::checkFields(*this, detail::Disclosure::everything());
    if (!checked)
        return Error{checked.errorKind(),
                     QStringLiteral("invalid connection settings: ") + checked.errorMessage()};
    return render(*this, Render::QtOptions);
}

} // namespace outbox::core
