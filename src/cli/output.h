#pragma once

#include "core/event.h"
#include "core/jsontext.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QTextStream>
#include <QUuid>

#include <optional>

// Formatting shared by the outboxctl commands: times, durations, JSON, tables.
namespace outbox::cli {

// UTC, millisecond precision, "Z" suffix; empty for an invalid time.
QString isoTime(const QDateTime &time);
QJsonValue jsonTime(const QDateTime &time);          // null for an invalid time
QJsonValue jsonUuid(const std::optional<QUuid> &id); // null when there is none
// A duration rounded for people: "850ms", "42s", "3m12s", "2d4h".
QString humanDuration(qint64 milliseconds);
// "in 3m12s" / "12s ago", relative to `now`.
QString relativeTime(const QDateTime &time, const QDateTime &now);

// Parses any JSON value (QJsonDocument alone refuses top-level scalars).
// On error sets `error` to what is wrong and where (line, column, offset).
std::optional<QJsonValue> parseJsonValue(const QByteArray &text, QString *error = nullptr);
// Re-indents valid JSON text without converting numbers to double, so an
// operator sees exactly what is stored. indent < 0: compact, one line.
using core::reformatJson;
// One event as a JSON object; the payload is embedded verbatim (not as a
// double-converting QJsonValue). Like every JSON text below, control
// characters are escaped (core::escapeJsonControls): the output may go to a
// terminal.
QByteArray eventJson(const core::OutboxEvent &event, bool indented = false);
// Prints one event as a line of JSON Lines (`list --jsonl`, `export`).
void printJsonLine(QTextStream &out, const core::OutboxEvent &event);
// Compact JSON text of an object.
QByteArray jsonText(const QJsonObject &object, bool indented = false);

// A plain text table with left-aligned columns (right-aligned when asked).
// Cells are shown with their control characters escaped
// (core::escapeControls): they hold text written by producers and runners.
class Table final {
public:
    explicit Table(QStringList headers);
    void setRightAligned(int column) { m_right.append(column); }
    void addRow(QStringList cells);
    bool isEmpty() const { return m_rows.isEmpty(); }
    void print(QTextStream &stream) const;

private:
    QStringList m_headers;
    QList<QStringList> m_rows;
    QList<int> m_right;
};

// Shortens text to `width` characters for a table cell ("..." at the end)
// and folds newlines.
QString elide(const QString &text, int width);

} // namespace outbox::cli
