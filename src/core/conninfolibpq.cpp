#include "core/conninfolibpq.h"

#include "core/conninfocheck.h"

#include <QByteArrayView>
#include <QRegularExpression>

#include <libpq-fe.h>
#include <memory>

namespace outbox::core::detail {

namespace {

using Options = std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)>;

struct Parsed {
    Options options{nullptr, &PQconninfoFree};
    QString error; // libpq's message when options is null
};

Parsed libpqParse(const QString &text) {
    char *error = nullptr;
    Parsed parsed;
    parsed.options.reset(PQconninfoParse(text.toUtf8().constData(), &error));
    if (error) {
        parsed.error = QString::fromUtf8(error).trimmed();
        PQfreemem(error);
    }
    return parsed;
}

struct Keywords {
    QStringList all;
    QStringList secret;
};

const Keywords &keywords() {
    // Every keyword with no value: what PQconninfoParse returns for "".
    static const Keywords keywords = [] {
        Keywords k;
        const Parsed parsed = libpqParse(QString());
        for (const PQconninfoOption *o = parsed.options.get(); o && o->keyword; ++o) {
            const QString name = QString::fromUtf8(o->keyword);
            k.all << name;
            if (o->dispchar && QByteArrayView(o->dispchar).contains('*'))
                k.secret << name;
        }
        return k;
    }();
    return keywords;
}

// The keyword whose quoted value libpq found unterminated, and where it
// stands: the last quote that opens a value ("key='") such that the text
// before it, with an empty value in its place, parses. Any quote after it is
// escaped, so nothing else can pass.
QPair<QString, qsizetype> unterminatedKeyword(const QString &text) {
    static const QRegularExpression opening(QStringLiteral("\\s*=\\s*$"));
    for (qsizetype q = text.lastIndexOf(QLatin1Char('\'')); q > 0;
         q = text.lastIndexOf(QLatin1Char('\''), q - 1)) {
        const QString before = text.left(q);
        const QRegularExpressionMatch match = opening.match(before);
        if (!match.hasMatch() || !libpqParse(before + QStringLiteral("''")).options)
            continue;
        const QStringView key = QStringView(before).left(match.capturedStart());
        QString best;
        for (const QString &keyword : keywords().all) {
            if (key.endsWith(keyword) && keyword.size() > best.size())
                best = keyword;
        }
        return {best, key.size() - best.size()};
    }
    return {};
}

// libpq's message, reworded with the fix and quoting only what may be shown.
// libpq's own text quotes the input, password included; it is passed on
// only when nothing in the string is hidden. The patterns are libpq 15's
// English messages; a translated one takes the last branch.
QString describe(const QString &error, const QString &text, const Disclosure &d) {
    static const QRegularExpression missingEquals(
        QStringLiteral("^missing \"=\" after \"(.*)\" in connection info string$"));
    static const QRegularExpression badOption(
        QStringLiteral("^invalid connection option \"(.*)\"$"));
    static const QRegularExpression badQueryParameter(
        QStringLiteral("^invalid URI query parameter: \"(.*)\"$"));
    static const QRegularExpression queryWithoutValue(QStringLiteral(
        "^(?:missing|extra) key/value separator \"=\" in URI query parameter: \"(.*)\"$"));
    static const QRegularExpression badEscape(
        QStringLiteral("^invalid percent-encoded token: \"(.*)\"$"));
    static const QRegularExpression zeroByte(
        QStringLiteral("^forbidden value %00 in percent-encoded value: \"(.*)\"$"));
    QRegularExpressionMatch m;

    if ((m = missingEquals.match(error)).hasMatch()) {
        const QString word = m.captured(1);
        if (!d.mayShow(word))
            return QStringLiteral("a word without \"=\"") % d.quote(word) %
                   QStringLiteral("; write key=value pairs") % d.passwordHint();
        if (word == text)
            return QStringLiteral("missing \"=\" after \"") % word %
                   QStringLiteral("\"; write key=value pairs (dbname=") % word %
                   QStringLiteral(") or a URI (postgresql://host/") % word % QLatin1Char(')');
        return QStringLiteral("missing \"=\" after \"") % word %
               QStringLiteral("\"; write key=value pairs, a value with spaces in single quotes "
                              "(key='a b')");
    }
    if ((m = badOption.match(error)).hasMatch())
        return unknownKeyword(m.captured(1), d);
    if (error == QLatin1String("unterminated quoted string in connection info string")) {
        const auto [key, position] = unterminatedKeyword(text);
        const QString fix = QStringLiteral("; close it with ' (write \\' for a quote inside)");
        if (!key.isEmpty() && d.mayShowAt(position, key.size()))
            return QStringLiteral("unterminated quoted value for \"") % key % QLatin1Char('"') %
                   fix;
        return QStringLiteral("unterminated quoted value") % fix %
               (d.hidesNothing() ? QString() : d.passwordHint());
    }
    if (error.startsWith(QLatin1String("end of string reached when looking for matching \"]\"")))
        return QStringLiteral("an IPv6 address in the URI lacks its closing \"]\"; write "
                              "[::1]:5432");
    if (error.startsWith(QLatin1String("IPv6 host address may not be empty")))
        return QStringLiteral("an IPv6 address in the URI is empty; write [::1]:5432");
    if (error.startsWith(QLatin1String("unexpected character")))
        return QStringLiteral("unexpected text after an IPv6 address in the URI; write "
                              "[::1]:5432/dbname");
    if ((m = badQueryParameter.match(error)).hasMatch()) {
        // libpq's JDBC spelling ssl=true is the only ssl= it takes.
        if (m.captured(1) == QLatin1String("ssl"))
            return QStringLiteral("the URI parameter ssl only accepts \"true\"; use sslmode=... "
                                  "instead");
        return unknownKeyword(m.captured(1), d);
    }
    if ((m = queryWithoutValue.match(error)).hasMatch())
        return QStringLiteral("the URI query parameter") % d.quote(m.captured(1)) %
               QStringLiteral(" is not of the form key=value (write an = inside a value as %3D)");
    if ((m = badEscape.match(error)).hasMatch()) {
        const QString token = m.captured(1);
        if (!d.mayShow(token))
            return QStringLiteral("invalid percent-encoding in the password or next to it (not "
                                  "shown)") %
                   d.passwordHint();
        return QStringLiteral("invalid percent-encoding in \"") % token %
               QStringLiteral("\" in the URI; write a literal % as %25");
    }
    if ((m = zeroByte.match(error)).hasMatch())
        return QStringLiteral("invalid percent-encoding") % d.quote(m.captured(1)) %
               QStringLiteral(" in the URI: %00 (a zero byte) is not allowed; remove it");
    if (d.hidesNothing())
        return QStringLiteral("libpq cannot read it: ") % error;
    return QStringLiteral("libpq cannot read it (its message is not shown, as it may quote a "
                          "password); put values with spaces in single quotes (key='a b') and "
                          "percent-encode special characters in a URI (@ as %40)");
}

} // namespace

const QStringList &libpqKeywords() {
    return keywords().all;
}

bool isSecretKeyword(QStringView key) {
    return keywords().secret.contains(key);
}

Result<QList<QPair<QString, QString>>> parseWithLibpq(const QString &text,
                                                      const Disclosure &disclosure) {
    const Parsed parsed = libpqParse(text);
    if (!parsed.options)
        return Error{ErrorKind::Invalid, describe(parsed.error, text, disclosure)};
    QList<QPair<QString, QString>> pairs;
    for (const PQconninfoOption *o = parsed.options.get(); o->keyword; ++o) {
        if (o->val)
            pairs.append({QString::fromUtf8(o->keyword), QString::fromUtf8(o->val)});
    }
    return pairs;
}

} // namespace outbox::core::detail
