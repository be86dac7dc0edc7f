#include "console/widgets/logview.h"

#include "core/enumnames.h"

#include <QFontDatabase>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QVBoxLayout>

namespace outbox::console {

namespace {

constexpr core::EnumName<LogView::Level> kLevelTags[] = {{LogView::Level::Info, "info "},
                                                         {LogView::Level::Warning, "warn "},
                                                         {LogView::Level::Error, "error"}};

QString levelTag(LogView::Level level) {
    return core::nameOf(kLevelTags, level);
}

} // namespace

LogView::LogView(QWidget *parent)
    : QWidget(parent)
    , m_text(new QPlainTextEdit(this)) {
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_text);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setMaximumBlockCount(m_maxLines);
    m_text->setPlaceholderText(tr("Dispatcher events appear here."));
    m_text->setObjectName(QStringLiteral("dispatcherLogText"));
}

LogView::~LogView() = default;

void LogView::setMaxLines(int lines) {
    m_maxLines = qMax(1, lines);
    m_text->setMaximumBlockCount(m_maxLines);
}

int LogView::lineCount() const {
    return m_text->document()->isEmpty() ? 0 : m_text->document()->blockCount();
}

QStringList LogView::lines() const {
    QStringList out;
    if (m_text->document()->isEmpty())
        return out;
    for (QTextBlock block = m_text->document()->begin(); block.isValid(); block = block.next())
        out.append(block.text());
    return out;
}

void LogView::append(Level level, const QString &text, const QDateTime &at) {
    const QDateTime when = at.isValid() ? at.toLocalTime() : QDateTime::currentDateTime();
    QString oneLine = text;
    oneLine.replace(QLatin1Char('\n'), QLatin1Char(' '));
    oneLine.replace(QLatin1Char('\r'), QLatin1Char(' '));
    const QString line = when.toString(QStringLiteral("HH:mm:ss.zzz")) + QLatin1Char(' ') +
                         levelTag(level) + QLatin1Char(' ') + oneLine;

    // Keep the view pinned to the bottom only when the user has not scrolled
    // up to read something.
    QScrollBar *bar = m_text->verticalScrollBar();
    const bool atBottom = bar->value() >= bar->maximum() - 2;

    QTextCharFormat format;
    if (level == Level::Error)
        format.setForeground(QColor(0xc0, 0x1c, 0x28));
    else if (level == Level::Warning)
        format.setForeground(QColor(0x9a, 0x67, 0x00));
    QTextCursor cursor(m_text->document());
    cursor.movePosition(QTextCursor::End);
    if (!m_text->document()->isEmpty())
        cursor.insertBlock();
    cursor.insertText(line, format);
    if (atBottom)
        bar->setValue(bar->maximum());
}

void LogView::clear() {
    m_text->clear();
}

} // namespace outbox::console
