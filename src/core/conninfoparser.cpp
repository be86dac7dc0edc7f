#include "core/conninfoparser.h"

#include <QByteArray>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace outbox::core::detail {

namespace {

// libpq 15's connection keywords (PQconndefaults()). Keywords added in later
// releases (require_auth, load_balance_hosts, sslcertmode, ...) are refused
// because the libpq this project links would refuse them at connect time,
// with a less helpful message.
const QStringList &knownKeywords() {
    static const QStringList keywords{
        QStringLiteral("service"),
        QStringLiteral("user"),
        QStringLiteral("password"),
        QStringLiteral("passfile"),
        QStringLiteral("channel_binding"),
        QStringLiteral("connect_timeout"),
        QStringLiteral("dbname"),
        QStringLiteral("host"),
        QStringLiteral("hostaddr"),
        QStringLiteral("port"),
        QStringLiteral("client_encoding"),
        QStringLiteral("options"),
        QStringLiteral("application_name"),
        QStringLiteral("fallback_application_name"),
        QStringLiteral("keepalives"),
        QStringLiteral("keepalives_idle"),
        QStringLiteral("keepalives_interval"),
        QStringLiteral("keepalives_count"),
        QStringLiteral("tcp_user_timeout"),
        QStringLiteral("sslmode"),
        QStringLiteral("sslcompression"),
        QStringLiteral("sslcert"),
        QStringLiteral("sslkey"),
        QStringLiteral("sslpassword"),
        QStringLiteral("sslrootcert"),
        QStringLiteral("sslcrl"),
        QStringLiteral("sslcrldir"),
        QStringLiteral("sslsni"),
        QStringLiteral("requirepeer"),
        QStringLiteral("ssl_min_protocol_version"),
        QStringLiteral("ssl_max_protocol_version"),
        QStringLiteral("gssencmode"),
        QStringLiteral("krbsrvname"),
        QStringLiteral("gsslib"),
        QStringLiteral("replication"),
        QStringLiteral("target_session_attrs"),
    };
    return keywords;
}

Result<void> invalid(const QString &message) {
    return Result<void>::failure(ErrorKind::Invalid,
                                 QStringLiteral("invalid connection string: ") + message);
}

qsizetype editDistance(QStringView a, QStringView b) {
    std::vector<qsizetype> row(size_t(b.size()) + 1);
    for (qsizetype j = 0; j <= b.size(); ++j)
        row[size_t(j)] = j;
    for (qsizetype i = 1; i <= a.size(); ++i) {
        qsizetype diagonal = row[0];
        row[0] = i;
        for (qsizetype j = 1; j <= b.size(); ++j) {
            const qsizetype above = row[size_t(j)];
            const qsizetype cost = a[i - 1] == b[j - 1] ? 0 : 1;
            row[size_t(j)] = std::min({above + 1, row[size_t(j - 1)] + 1, diagonal + cost});
            diagonal = above;
        }
    }
    return row[size_t(b.size())];
}

QString suggestionFor(const QString &key) {
    // Names people carry over from other tools.
    static const QList<QPair<QLatin1String, QLatin1String>> aliases{
        {QLatin1String("database"), QLatin1String("dbname")},
        {QLatin1String("db"), QLatin1String("dbname")},
        {QLatin1String("username"), QLatin1String("user")},
        {QLatin1String("pass"), QLatin1String("password")},
        {QLatin1String("pwd"), QLatin1String("password")},
        {QLatin1String("hostname"), QLatin1String("host")},
        {QLatin1String("server"), QLatin1String("host")},
        {QLatin1String("timeout"), QLatin1String("connect_timeout")},
    };
    const QString lower = key.toLower();
    for (const auto &alias : aliases) {
        if (lower == alias.first)
            return alias.second;
    }
    QString best;
    qsizetype bestDistance = 3; // only close misspellings are worth a guess
    for (const QString &candidate : knownKeywords()) {
        const qsizetype d = editDistance(lower, candidate);
        if (d < bestDistance) {
            bestDistance = d;
            best = candidate;
        }
    }
    return best;
}

Result<void> checkChoice(const QString &key, const QString &value, const QStringList &choices,
                         Qt::CaseSensitivity cs = Qt::CaseSensitive) {
    if (value.isEmpty() || choices.contains(value, cs))
        return {};
    return invalid(QStringLiteral("invalid ") % key % QStringLiteral(" \"") % value %
                   QStringLiteral("\"; use one of ") % choices.join(QStringLiteral(", ")));
}

Result<void> checkNonNegativeInt(const QString &key, const QString &value) {
    if (value.isEmpty())
        return {};
    bool ok = false;
    const int n = value.toInt(&ok);
    if (ok && n >= 0 && value.front().isDigit())
        return {};
    return invalid(QStringLiteral("invalid ") % key % QStringLiteral(" \"") % value %
                   QStringLiteral("\"; use a whole number of seconds (0 or more)"));
}

Result<int> parsePort(const QString &value) {
    if (value.isEmpty())
        return 0;
    if (value.contains(QLatin1Char(',')))
        return Result<int>::failure(
            ErrorKind::Invalid,
            QStringLiteral("invalid connection string: several ports (\"") % value %
                QStringLiteral("\") are not supported; give one port for all hosts"));
    bool ok = false;
    const int port = value.toInt(&ok);
    const bool digitsOnly = std::all_of(value.begin(), value.end(), [](QChar c) {
        return c >= QLatin1Char('0') && c <= QLatin1Char('9');
    });
    if (!ok || !digitsOnly || port < 1 || port > 65535)
        return Result<int>::failure(ErrorKind::Invalid,
                                    QStringLiteral("invalid connection string: invalid port \"") %
                                        value % QStringLiteral("\"; use a number from 1 to 65535"));
    return port;
}

// Stores one keyword into `info`, validating the keyword and, for keywords
// with a fixed set of values, the value; later keywords override earlier ones
// as in libpq.
Result<void> store(ConnInfo &info, const QString &key, const QString &value) {
    if (key.isEmpty())
        return invalid(QStringLiteral("a keyword is missing before \"=\""));
    if (!knownKeywords().contains(key)) {
        QString message = QStringLiteral("unknown connection option \"") % key % QLatin1Char('"');
        const QString guess = suggestionFor(key);
        if (!guess.isEmpty())
            message += QStringLiteral("; did you mean ") % guess % QLatin1Char('?');
        else
            message += QStringLiteral("; see the libpq documentation for the keywords");
        return invalid(message);
    }
    if (key == QLatin1String("port")) {
        const auto port = parsePort(value);
        if (!port)
            return port.error();
        info.port = port.value();
        return {};
    }
    if (key == QLatin1String("sslmode")) {
        const auto check =
            checkChoice(key, value,
                        {QStringLiteral("disable"), QStringLiteral("allow"),
                         QStringLiteral("prefer"), QStringLiteral("require"),
                         QStringLiteral("verify-ca"), QStringLiteral("verify-full")});
        if (!check)
            return check;
    } else if (key == QLatin1String("gssencmode") || key == QLatin1String("channel_binding")) {
        const auto check = checkChoice(
            key, value,
            {QStringLiteral("disable"), QStringLiteral("prefer"), QStringLiteral("require")});
        if (!check)
            return check;
    } else if (key == QLatin1String("target_session_attrs")) {
        const auto check =
            checkChoice(key, value,
                        {QStringLiteral("any"), QStringLiteral("read-write"),
                         QStringLiteral("read-only"), QStringLiteral("primary"),
                         QStringLiteral("standby"), QStringLiteral("prefer-standby")});
        if (!check)
            return check;
    } else if (key == QLatin1String("ssl_min_protocol_version") ||
               key == QLatin1String("ssl_max_protocol_version")) {
        const auto check = checkChoice(key, value,
                                       {QStringLiteral("TLSv1"), QStringLiteral("TLSv1.1"),
                                        QStringLiteral("TLSv1.2"), QStringLiteral("TLSv1.3")},
                                       Qt::CaseInsensitive);
        if (!check)
            return check;
    } else if (key == QLatin1String("connect_timeout") ||
               key.startsWith(QLatin1String("keepalives")) ||
               key == QLatin1String("tcp_user_timeout")) {
        const auto check = checkNonNegativeInt(key, value);
        if (!check)
            return check;
    }
    info.setOption(key, value);
    return {};
}

} // namespace

bool isConnInfoSpace(QChar c) {
    // libpq uses isspace() on bytes: the C locale's six whitespace characters.
    return c == QLatin1Char(' ') || c == QLatin1Char('\t') || c == QLatin1Char('\n') ||
           c == QLatin1Char('\r') || c == QLatin1Char('\f') || c == QLatin1Char('\v');
}

// Mirrors libpq's conninfo_parse(): spaces around '=' are allowed, values may
// be single-quoted, and a backslash escapes the next character.
Result<void> parseConnInfoKeyValue(QStringView s, ConnInfo &info) {
    qsizetype i = 0;
    int tokens = 0;
    while (i < s.size()) {
        while (i < s.size() && isConnInfoSpace(s[i]))
            ++i;
        if (i >= s.size())
            break;
        const qsizetype keyStart = i;
        while (i < s.size() && s[i] != QLatin1Char('=') && !isConnInfoSpace(s[i]))
            ++i;
        const QString key = s.mid(keyStart, i - keyStart).toString();
        while (i < s.size() && isConnInfoSpace(s[i]))
            ++i;
        if (i >= s.size() || s[i] != QLatin1Char('=')) {
            QString message = QStringLiteral("missing \"=\" after \"") % key % QLatin1Char('"');
            if (tokens == 0 && i >= s.size())
                message += QStringLiteral("; write key=value pairs (dbname=") % key %
                           QStringLiteral(") or a URI (postgresql://host/") % key %
                           QLatin1Char(')');
            return invalid(message);
        }
        ++i; // '='
        while (i < s.size() && isConnInfoSpace(s[i]))
            ++i;

        QString value;
        if (i < s.size() && s[i] == QLatin1Char('\'')) {
            ++i;
            bool closed = false;
            while (i < s.size()) {
                if (s[i] == QLatin1Char('\\')) {
                    ++i;
                    if (i < s.size())
                        value += s[i++];
                    continue;
                }
                if (s[i] == QLatin1Char('\'')) {
                    ++i;
                    closed = true;
                    break;
                }
                value += s[i++];
            }
            if (!closed)
                return invalid(QStringLiteral("unterminated quoted value for \"") % key %
                               QStringLiteral("\"; close it with ' (write \\' for a quote)"));
        } else {
            while (i < s.size() && !isConnInfoSpace(s[i])) {
                if (s[i] == QLatin1Char('\\')) {
                    ++i;
                    if (i < s.size())
                        value += s[i++];
                    continue;
                }
                value += s[i++];
            }
        }
        const auto stored = store(info, key, value);
        if (!stored)
            return stored;
        ++tokens;
    }
    return {};
}

namespace {

int hexValue(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// libpq refuses malformed escapes and %00 rather than guessing; so do we.
// The text is never echoed: it may be part of a password.
std::optional<QString> percentDecode(QStringView text) {
    const QByteArray in = text.toUtf8();
    QByteArray out;
    out.reserve(in.size());
    for (qsizetype i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size())
            return std::nullopt;
        const int h = hexValue(in[i + 1]);
        const int l = hexValue(in[i + 2]);
        if (h < 0 || l < 0)
            return std::nullopt;
        const char byte = char(h * 16 + l);
        if (byte == '\0')
            return std::nullopt;
        out += byte;
        i += 2;
    }
    return QString::fromUtf8(out);
}

Result<void> badEncoding(const QString &where) {
    return invalid(QStringLiteral("invalid percent-encoding in the ") % where %
                   QStringLiteral(" of the URI; write a literal % as %25"));
}

} // namespace

// postgresql://[user[:password]@][host[:port][,...]][/dbname][?key=value&...]
Result<void> parseConnInfoUri(QStringView s, qsizetype prefixLength, ConnInfo &info) {
    QStringView rest = s.mid(prefixLength);
    const qsizetype authorityEnd = [&] {
        for (qsizetype i = 0; i < rest.size(); ++i) {
            if (rest[i] == QLatin1Char('/') || rest[i] == QLatin1Char('?'))
                return i;
        }
        return rest.size();
    }();
    QStringView authority = rest.left(authorityEnd);
    rest = rest.mid(authorityEnd);

    // The last '@' separates the credentials, so that an unencoded '@' in a
    // password still parses (libpq would take the first and fail on a host
    // name that is part of the password).
    const qsizetype at = authority.lastIndexOf(QLatin1Char('@'));
    if (at >= 0) {
        const QStringView userinfo = authority.left(at);
        authority = authority.mid(at + 1);
        const qsizetype colon = userinfo.indexOf(QLatin1Char(':'));
        const auto user = percentDecode(colon >= 0 ? userinfo.left(colon) : userinfo);
        if (!user)
            return badEncoding(QStringLiteral("user name"));
        info.user = *user;
        if (colon >= 0) {
            const auto password = percentDecode(userinfo.mid(colon + 1));
            if (!password)
                return badEncoding(QStringLiteral("password"));
            info.password = *password;
        }
    }

    QStringList hosts;
    QStringList ports;
    qsizetype i = 0;
    while (i <= authority.size() && !authority.isEmpty()) {
        QString host;
        if (i < authority.size() && authority[i] == QLatin1Char('[')) {
            const qsizetype close = authority.indexOf(QLatin1Char(']'), i);
            if (close < 0)
                return invalid(QStringLiteral(
                    "an IPv6 address in the URI lacks its closing \"]\"; write [::1]:5432"));
            if (close == i + 1)
                return invalid(QStringLiteral("an IPv6 address in the URI is empty"));
            const auto decoded = percentDecode(authority.mid(i + 1, close - i - 1));
            if (!decoded)
                return badEncoding(QStringLiteral("host"));
            host = *decoded;
            i = close + 1;
            if (i < authority.size() && authority[i] != QLatin1Char(':') &&
                authority[i] != QLatin1Char(','))
                return invalid(QStringLiteral(
                    "unexpected text after an IPv6 address in the URI; write [::1]:5432"));
        } else {
            const qsizetype start = i;
            while (i < authority.size() && authority[i] != QLatin1Char(':') &&
                   authority[i] != QLatin1Char(','))
                ++i;
            const auto decoded = percentDecode(authority.mid(start, i - start));
            if (!decoded)
                return badEncoding(QStringLiteral("host"));
            host = *decoded;
        }
        QString port;
        if (i < authority.size() && authority[i] == QLatin1Char(':')) {
            const qsizetype start = ++i;
            while (i < authority.size() && authority[i] != QLatin1Char(','))
                ++i;
            port = authority.mid(start, i - start).toString();
        }
        hosts << host;
        ports << port;
        if (i >= authority.size())
            break;
        ++i; // ','
        if (i == authority.size()) {
            hosts << QString();
            ports << QString();
            break;
        }
    }
    if (!hosts.isEmpty()) {
        // ConnInfo keeps one port. libpq gives a host without a port the
        // default port, so mixed lists cannot be folded into one value.
        const QString firstPort = ports.first();
        if (std::any_of(ports.begin(), ports.end(),
                        [&](const QString &p) { return p != firstPort; }))
            return invalid(QStringLiteral(
                "the hosts in the URI have different ports; give every host the same port"));
        const auto port = parsePort(firstPort);
        if (!port)
            return port.error();
        info.port = port.value();
        info.host = hosts.join(QLatin1Char(','));
    }

    if (rest.startsWith(QLatin1Char('/'))) {
        const qsizetype query = rest.indexOf(QLatin1Char('?'));
        const auto dbname = percentDecode(rest.mid(1, query < 0 ? -1 : query - 1));
        if (!dbname)
            return badEncoding(QStringLiteral("database name"));
        info.dbname = *dbname;
        rest = query < 0 ? QStringView() : rest.mid(query);
    }

    if (rest.startsWith(QLatin1Char('?'))) {
        const QStringView query = rest.mid(1);
        for (QStringView param : query.split(QLatin1Char('&'))) {
            if (param.isEmpty())
                continue;
            const qsizetype eq = param.indexOf(QLatin1Char('='));
            if (eq < 0 || param.indexOf(QLatin1Char('='), eq + 1) >= 0)
                return invalid(QStringLiteral(
                    "a URI query parameter is not of the form key=value (write = as %3D)"));
            const auto key = percentDecode(param.left(eq));
            const auto value = percentDecode(param.mid(eq + 1));
            if (!key || !value)
                return badEncoding(QStringLiteral("query"));
            // libpq's JDBC-compatible spelling.
            if (*key == QLatin1String("ssl")) {
                if (*value != QLatin1String("true"))
                    return invalid(QStringLiteral(
                        "the URI parameter ssl only accepts \"true\"; use sslmode=... instead"));
                info.sslmode = QStringLiteral("require");
                continue;
            }
            const auto stored = store(info, *key, *value);
            if (!stored)
                return stored;
        }
    }
    return {};
}

} // namespace outbox::core::detail
