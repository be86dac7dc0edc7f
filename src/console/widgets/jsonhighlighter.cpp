#include "console/widgets/jsonhighlighter.h"

#include "core/jsontext.h"

#include <QJsonDocument>
#include <QJsonParseError>

namespace outbox::console {

QString prettyJson(const QByteArray &json, int indent) {
    QJsonParseError error;
    QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError) {
        return QString::fromUtf8(json);
    }
    return core::reformatJson(json, indent);
}

JsonHighlighter::JsonHighlighter(QTextDocument *document)
    : QSyntaxHighlighter(document)
    , m_token(QStringLiteral(R"(("(?:[^"\\]|\\.)*")(\s*:)?)"
                             R"(|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))"
                             R"(|\b(true|false|null)\b)"
                             R"(|([{}\[\],:]))")) {
    setDarkBackground(false);
}

void JsonHighlighter::setDarkBackground(bool dark) {
    m_key.setForeground(dark ? QColor(0x9c, 0xdc, 0xfe) : QColor(0x00, 0x45, 0x8b));
    m_key.setFontWeight(QFont::DemiBold);
    m_string.setForeground(dark ? QColor(0xce, 0x91, 0x78) : QColor(0xa3, 0x15, 0x15));
    m_number.setForeground(dark ? QColor(0xb5, 0xce, 0xa8) : QColor(0x09, 0x86, 0x58));
    m_literal.setForeground(dark ? QColor(0x56, 0x9c, 0xd6) : QColor(0x7f, 0x00, 0x7f));
    m_literal.setFontWeight(QFont::DemiBold);
    m_punctuation.setForeground(dark ? QColor(0xa0, 0xa0, 0xa0) : QColor(0x60, 0x60, 0x60));
    rehighlight();
}

void JsonHighlighter::highlightBlock(const QString &text) {
    auto it = m_token.globalMatch(text);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        if (m.capturedLength(1) > 0) {
            const bool isKey = m.capturedLength(2) > 0;
            setFormat(int(m.capturedStart(1)), int(m.capturedLength(1)), isKey ? m_key : m_string);
            if (isKey) {
                setFormat(int(m.capturedEnd(1)), int(m.capturedLength(2)), m_punctuation);
            }
        } else if (m.capturedLength(3) > 0) {
            setFormat(int(m.capturedStart(3)), int(m.capturedLength(3)), m_number);
        } else if (m.capturedLength(4) > 0) {
            setFormat(int(m.capturedStart(4)), int(m.capturedLength(4)), m_literal);
        } else if (m.capturedLength(5) > 0) {
            setFormat(int(m.capturedStart(5)), int(m.capturedLength(5)), m_punctuation);
        }
    }
}

} // namespace outbox::console
