#pragma once

#include <QByteArray>
#include <QRegularExpression>
#include <QString>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>

namespace outbox::console {

// Re-indents JSON text without parsing its values, so numbers keep their
// exact digits (QJsonDocument would turn a large integer into a double).
// Text that is not valid JSON comes back unchanged.
QString prettyJson(const QByteArray &json, int indent = 2);

// Colours JSON: keys, strings, numbers, true/false/null and punctuation.
// Strings never span lines in JSON, so every block is coloured on its own.
class JsonHighlighter final : public QSyntaxHighlighter {
    Q_OBJECT

public:
    explicit JsonHighlighter(QTextDocument *document);
    Q_DISABLE_COPY_MOVE(JsonHighlighter)

    // Picks colours that read well on the given background.
    void setDarkBackground(bool dark);

protected:
    void highlightBlock(const QString &text) override;

private:
    QRegularExpression m_token;
    QTextCharFormat m_key;
    QTextCharFormat m_string;
    QTextCharFormat m_number;
    QTextCharFormat m_literal;
    QTextCharFormat m_punctuation;
};

} // namespace outbox::console
