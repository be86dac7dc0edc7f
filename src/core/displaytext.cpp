#include "core/displaytext.h"

#include <QRegularExpression>

#include <algorithm>

namespace outbox::core {

namespace {

bool isControl(char16_t c) {
    return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f);
}

QString hex2(char16_t c) {
    return QStringLiteral("%1").arg(uint(c), 2, 16, QLatin1Char('0'));
}

} // namespace

QString escapeControls(QStringView text, bool keepNewlines) {
    const auto needsEscape = [keepNewlines](QChar c) {
        return isControl(c.unicode()) && !(keepNewlines && c == QLatin1Char('\n'));
    };
    if (std::none_of(text.begin(), text.end(), needsEscape))
        return text.toString();
    QString escaped;
    escaped.reserve(text.size() + 8);
    for (const QChar c : text) {
        if (!needsEscape(c)) {
            escaped += c;
        } else if (c.unicode() < 0x80) {
            escaped += QStringLiteral("\\x") + hex2(c.unicode());
        } else {
            escaped += QStringLiteral("\\u00") + hex2(c.unicode());
        }
    }
    return escaped;
}

QByteArray escapeJsonControls(const QByteArray &json) {
    // DEL is one byte; U+0080-U+009F are 0xC2 0x80-0x9F in UTF-8 (0xC2 never
    // starts anything else, and a continuation byte never follows a lead
    // byte of another sequence here).
    const auto special = [&json](qsizetype i) {
        const auto b = uchar(json.at(i));
        return b == 0x7f || (b == 0xc2 && i + 1 < json.size() && uchar(json.at(i + 1)) >= 0x80 &&
                             uchar(json.at(i + 1)) <= 0x9f);
    };
    qsizetype i = 0;
    while (i < json.size() && !special(i))
        ++i;
    if (i == json.size())
        return json;
    QByteArray escaped = json.left(i);
    for (; i < json.size(); ++i) {
        if (!special(i)) {
            escaped += json.at(i);
            continue;
        }
        const uint code = uchar(json.at(i)) == 0x7f ? 0x7fu : uint(uchar(json.at(++i)));
        escaped += "\\u00" + QByteArray::number(code, 16).rightJustified(2, '0');
    }
    return escaped;
}

QUrl urlWithoutCredentials(const QUrl &url) {
    return url.adjusted(QUrl::RemoveUserInfo | QUrl::RemoveQuery | QUrl::RemoveFragment);
}

QString redactedUrl(const QUrl &url) {
    if (url.isEmpty())
        return QString();
    QString text = urlWithoutCredentials(url).toString();
    if (!url.userInfo().isEmpty()) {
        const qsizetype scheme = text.indexOf(QLatin1String("://"));
        if (scheme >= 0)
            text.insert(scheme + 3, QLatin1String("***@"));
    }
    if (url.hasQuery())
        text += QLatin1String("?***");
    return escapeControls(text);
}

QString redactedUrlText(const QString &text) {
    static const QRegularExpression userInfo(
        QStringLiteral("^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@"));
    static const QRegularExpression query(QStringLiteral("\\?[^#]*"));
    static const QRegularExpression fragment(QStringLiteral("#.*$"),
                                             QRegularExpression::DotMatchesEverythingOption);
    QString redacted = text;
    redacted.replace(userInfo, QStringLiteral("\\1***@"));
    redacted.replace(fragment, QString());
    redacted.replace(query, QStringLiteral("?***"));
    return escapeControls(redacted);
}

} // namespace outbox::core
