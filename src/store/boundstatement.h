#pragma once

#include "core/result.h"

#include <QList>
#include <QSqlDatabase>
#include <QSqlDriver>
#include <QString>
#include <QVariant>

#include <optional>

namespace outbox::store {

// The rows of a statement run by execBound(), as text (PostgreSQL's text
// output: booleans are "t"/"f"); a NULL is an empty optional.
struct BoundRows {
    QList<QList<std::optional<QString>>> rows;

    bool isEmpty() const { return rows.isEmpty(); }
    std::optional<QString> value(qsizetype row, qsizetype column) const {
        return rows.value(row).value(column);
    }
    bool isTrue(qsizetype row, qsizetype column) const {
        return value(row, column) == QStringLiteral("t");
    }
};

// Runs one statement (placeholders $1, $2, ...) with `values` sent as bind
// parameters of PostgreSQL's extended query protocol, through libpq on the
// connection QPSQL opened for `db`.
//
// Why not QSqlQuery::prepare(): QPSQL (Qt 6.4) sends a prepared query as
// `EXECUTE qpsqlpstmt_N (<the values as literals>)`, so the values are part
// of the statement text that pg_stat_activity.query shows to every session of
// the same login (and to pg_read_all_stats), that log_statement writes, and
// that error messages echo. Here the text is the statement with its
// placeholders only; the values travel apart. Use it for what must not be
// seen that way: the registry's secret token, payloads.
//
// Values: null QVariants are NULL; strings, byte arrays, integers, doubles
// and booleans are sent as text, typed by the casts in the statement ($1::uuid).
// Runs inside the transaction `db` has open, if any. Not for a session that
// LISTENs: a notification that arrives during the statement waits in libpq
// until the next one wakes QPSQL's notifier.
// The socket of the connection QPSQL opened for `driver` (-1: none).
int connectionSocket(const QSqlDriver *driver);
// Reads what the server has sent on that connection (libpq queues the
// notifications for QPSQL to take); false when the connection turned out to
// be gone (the server closed it: libpq has closed the socket).
bool readPendingInput(const QSqlDriver *driver);

core::Result<BoundRows> execBound(QSqlDatabase db, const QString &sql, const QVariantList &values,
                                  const QString &context);

} // namespace outbox::store
