#include "core/conninfocheck.h"

#include "core/conninfolibpq.h"

#include <QRegularExpression>
#include <QSet>
#include <QStringList>

#include <algorithm>
#include <vector>

namespace outbox::core::detail {

namespace {

Error invalid(const QString &message) {
    return {ErrorKind::Invalid, message};
}

// The fields QPSQL takes separately (and quotes itself), and sslmode: the
// keywords ConnInfo keeps in named members rather than in `options`.
bool isNamedKey(QStringView key) {
    return key == QLatin1String("host") || key == QLatin1String("port") ||
           key == QLatin1String("dbname") || key == QLatin1String("user") ||
           key == QLatin1String("password") || key == QLatin1String("sslmode");
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

// "invalid <key> "<value>"; <what would be right>", with the password hint
// when the value may be part of a password.
Error invalidValue(const QString &key, const QString &value, const QString &hint,
                   const Disclosure &disclosure) {
    QString message = QStringLiteral("invalid ") % key % disclosure.quote(value) % hint;
    if (!disclosure.mayShow(value))
        message += disclosure.passwordHint();
    return invalid(message);
}

Result<void> checkNonNegativeInt(const QString &key, const QString &value,
                                 const Disclosure &disclosure) {
    if (value.isEmpty())
        return {};
    bool ok = false;
    const int n = value.toInt(&ok);
    if (ok && n >= 0 && value.front().isDigit())
        return {};
    return invalidValue(key, value, QStringLiteral("; use a whole number of seconds (0 or more)"),
                        disclosure);
}

// Values libpq accepts when it parses but refuses only when it connects,
// with a message that does not say what would be right.
Result<void> checkValue(const QString &key, const QString &value, const Disclosure &disclosure) {
    struct Choice {
        QStringList keys;
        QStringList values;
        Qt::CaseSensitivity cs;
    };
    static const Choice choices[] = {
        {{QStringLiteral("sslmode")},
         {QStringLiteral("disable"), QStringLiteral("allow"), QStringLiteral("prefer"),
          QStringLiteral("require"), QStringLiteral("verify-ca"), QStringLiteral("verify-full")},
         Qt::CaseSensitive},
        {{QStringLiteral("gssencmode"), QStringLiteral("channel_binding")},
         {QStringLiteral("disable"), QStringLiteral("prefer"), QStringLiteral("require")},
         Qt::CaseSensitive},
        {{QStringLiteral("target_session_attrs")},
         {QStringLiteral("any"), QStringLiteral("read-write"), QStringLiteral("read-only"),
          QStringLiteral("primary"), QStringLiteral("standby"), QStringLiteral("prefer-standby")},
         Qt::CaseSensitive},
        {{QStringLiteral("ssl_min_protocol_version"), QStringLiteral("ssl_max_protocol_version")},
         {QStringLiteral("TLSv1"), QStringLiteral("TLSv1.1"), QStringLiteral("TLSv1.2"),
          QStringLiteral("TLSv1.3")},
         Qt::CaseInsensitive},
    };
    for (const Choice &choice : choices) {
        if (!choice.keys.contains(key))
            continue;
        if (value.isEmpty() || choice.values.contains(value, choice.cs))
            return {};
        return invalidValue(
            key, value, QStringLiteral("; use one of ") % choice.values.join(QStringLiteral(", ")),
            disclosure);
    }
    if (key == QLatin1String("connect_timeout") || key.startsWith(QLatin1String("keepalives")) ||
        key == QLatin1String("tcp_user_timeout"))
        return checkNonNegativeInt(key, value, disclosure);
    return {};
}

} // namespace

bool isUri(QStringView text) {
    // libpq's own test: the scheme, case-sensitive, at the very start.
    return text.startsWith(QLatin1String("postgresql://")) ||
           text.startsWith(QLatin1String("postgres://"));
}

Disclosure::Disclosure(QStringView text)
    : m_text(text.toString())
    , m_uri(isUri(text)) {
    const auto hide = [this](qsizetype begin, qsizetype end) {
        if (begin >= 0 && begin < end)
            m_hidden.append({begin, end});
    };
    // The whole rest, not just the value libpq reads: in "password=my
    // secret" the writer's password goes on after the space.
    const qsizetype keyword = m_text.indexOf(QLatin1String("password"), 0, Qt::CaseInsensitive);
    if (keyword >= 0)
        hide(keyword + 8, m_text.size());
    if (m_uri) {
        const qsizetype start = m_text.indexOf(QLatin1String("://")) + 3;
        const qsizetype colon = m_text.indexOf(QLatin1Char(':'), start);
        const qsizetype at = m_text.lastIndexOf(QLatin1Char('@'));
        if (colon >= 0 && colon < at)
            hide(colon + 1, at);
        // A percent-encoded query keyword may spell "password".
        const qsizetype query = m_text.indexOf(QLatin1Char('?'), start);
        if (query >= 0)
            hide(m_text.indexOf(QLatin1Char('%'), query), m_text.size());
    }
}

bool Disclosure::mayShowAt(qsizetype position, qsizetype length) const {
    return std::none_of(m_hidden.begin(), m_hidden.end(), [&](const auto &range) {
        return position < range.second && position + length > range.first;
    });
}

bool Disclosure::mayShow(QStringView fragment) const {
    if (m_hidden.isEmpty() || fragment.isEmpty())
        return true;
    bool found = false;
    for (qsizetype i = m_text.indexOf(fragment); i >= 0; i = m_text.indexOf(fragment, i + 1)) {
        if (!mayShowAt(i, fragment.size()))
            return false;
        found = true;
    }
    // Not in the text as written (decoded from a URI): it may still be
    // made of hidden text.
    return found;
}

QString Disclosure::quote(QStringView fragment) const {
    if (mayShow(fragment))
        return QStringLiteral(" \"") % fragment % QLatin1Char('"');
    return QStringLiteral(" (not shown: it may be part of a password)");
}

QString Disclosure::passwordHint() const {
    if (m_uri)
        return QStringLiteral("; in a URI, percent-encode the special characters of a user name "
                              "or password (@ as %40, / as %2F, : as %3A, & as %26, % as %25)");
    return QStringLiteral("; put a password that contains spaces or quotes in single quotes: "
                          "password='my secret' (write \\' for a quote)");
}

Result<void> checkUriCredentials(QStringView uri) {
    // libpq looks for the '@' that ends the credentials up to the first '/',
    // and takes the first one it finds.
    const qsizetype start = uri.indexOf(QLatin1String("://")) + 3;
    qsizetype slash = uri.indexOf(QLatin1Char('/'), start);
    if (slash < 0)
        slash = uri.size();
    const QStringView authority = uri.mid(start, slash - start);
    if (authority.count(QLatin1Char('@')) > 1)
        return invalid(QStringLiteral("the URI has more than one \"@\" before the database name; "
                                      "percent-encode an @ in the user name or password as %40"));
    // "user:pass/word@host": libpq ends the host at the '/' and reads
    // "user" as the host and "pass" as the port.
    if (authority.contains(QLatin1Char('@')))
        return {};
    static const QRegularExpression ipv6(QStringLiteral("\\[[^]]*\\]"));
    QString outsideBrackets = authority.toString();
    outsideBrackets.remove(ipv6);
    qsizetype query = uri.indexOf(QLatin1Char('?'), slash);
    if (query < 0)
        query = uri.size();
    if (outsideBrackets.contains(QLatin1Char(':')) &&
        uri.mid(slash, query - slash).contains(QLatin1Char('@')))
        return invalid(QStringLiteral(
            "the URI has an \"@\" after a \"/\"; percent-encode a / in a password as %2F (and an "
            "@ in a database name as %40)"));
    return {};
}

Result<int> portNumber(const QString &value, bool fromUri, const Disclosure &disclosure) {
    const QStringList ports = value.split(QLatin1Char(','));
    if (std::any_of(ports.begin(), ports.end(), [&](const QString &p) { return p != ports[0]; })) {
        if (fromUri)
            return invalid(QStringLiteral(
                "the hosts in the URI have different ports; give every host the same port"));
        return invalid(QStringLiteral("several ports") % disclosure.quote(value) %
                       QStringLiteral(" are not supported; give every host the same port"));
    }
    const QString &port = ports[0];
    if (port.isEmpty())
        return 0;
    bool ok = false;
    const int number = port.toInt(&ok);
    const bool digitsOnly = std::all_of(port.begin(), port.end(), [](QChar c) {
        return c >= QLatin1Char('0') && c <= QLatin1Char('9');
    });
    if (ok && digitsOnly && number >= 1 && number <= 65535)
        return number;
    return invalidValue(QStringLiteral("port"), port,
                        QStringLiteral("; use a number from 1 to 65535"), disclosure);
}

Result<void> checkFields(const ConnInfo &info, const Disclosure &disclosure) {
    QList<QPair<QString, QString>> fields{{QStringLiteral("host"), info.host},
                                          {QStringLiteral("dbname"), info.dbname},
                                          {QStringLiteral("user"), info.user},
                                          {QStringLiteral("password"), info.password},
                                          {QStringLiteral("sslmode"), info.sslmode}};
    QSet<QString> seen;
    for (const auto &[key, value] : info.options) {
        if (!libpqKeywords().contains(key))
            return invalid(unknownKeyword(key, disclosure));
        if (isNamedKey(key) || seen.contains(key))
            return invalid(QStringLiteral("the option ") % key %
                           QStringLiteral(" is set twice; keep one"));
        seen.insert(key);
        fields.append({key, value});
    }
    for (const auto &[key, value] : fields) {
        if (value.contains(QChar(0)))
            return invalid(key % QStringLiteral(" contains a NUL character, which would end the "
                                                "connection string there; remove it"));
    }
    for (const auto &[key, value] : fields) {
        const auto checked = checkValue(key, value, disclosure);
        if (!checked)
            return checked;
        // QPSQL quotes host, dbname, user and password itself; the rest go
        // through its connect options, where every ';' becomes a space.
        const bool viaOptions = key != QLatin1String("host") && key != QLatin1String("dbname") &&
                                key != QLatin1String("user") && key != QLatin1String("password");
        if (viaOptions && value.contains(QLatin1Char(';')))
            return invalid(key % QStringLiteral(" contains \";\", which the Qt PostgreSQL driver "
                                                "(QPSQL) turns into a space on the way to libpq; "
                                                "remove the \";\""));
    }
    return {};
}

namespace {

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
    for (const QString &candidate : libpqKeywords()) {
        const qsizetype d = editDistance(lower, candidate);
        if (d < bestDistance) {
            bestDistance = d;
            best = candidate;
        }
    }
    return best;
}

} // namespace

QString unknownKeyword(const QString &key, const Disclosure &disclosure) {
    if (key.isEmpty())
        return QStringLiteral("a keyword is missing before \"=\"");
    if (!disclosure.mayShow(key))
        return QStringLiteral("unknown connection option") % disclosure.quote(key) %
               disclosure.passwordHint();
    const QString guess = suggestionFor(key);
    if (guess.isEmpty())
        return QStringLiteral("unknown connection option \"") % key %
               QStringLiteral("\"; see the libpq documentation for the keywords");
    return QStringLiteral("unknown connection option \"") % key %
           QStringLiteral("\"; did you mean ") % guess % QLatin1Char('?');
}

} // namespace outbox::core::detail
