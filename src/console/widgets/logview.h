#pragma once

#include <QDateTime>
#include <QStringList>
#include <QWidget>

class QPlainTextEdit;

namespace outbox::console {

// A bounded, read-only log for the dispatcher panel: one timestamped line
// per entry (state changes, configuration applied/rejected, failures).
// Older lines are dropped once maxLines is reached so a dispatcher that runs
// for days keeps constant memory.
class LogView final : public QWidget {
    Q_OBJECT
public:
    enum class Level { Info, Warning, Error };

    explicit LogView(QWidget *parent = nullptr);
    ~LogView() override;
    Q_DISABLE_COPY_MOVE(LogView)

    static constexpr int DefaultMaxLines = 1000;

    void setMaxLines(int lines); // >= 1; trims at once
    int lineCount() const;
    // The lines as shown (time, level, text), oldest first.
    QStringList lines() const;

public Q_SLOTS:
    // `at` defaults to now (local time is shown). Newlines in `text` are
    // folded into spaces so one entry is one line.
    void append(outbox::console::LogView::Level level, const QString &text,
                const QDateTime &at = {});
    void info(const QString &text) { append(Level::Info, text); }
    void warning(const QString &text) { append(Level::Warning, text); }
    void error(const QString &text) { append(Level::Error, text); }
    void clear();

private:
    QPlainTextEdit *m_text = nullptr;
    int m_maxLines = DefaultMaxLines;
};

} // namespace outbox::console
