#include "store/boundstatement.h"

#include "store/database.h"

#include <QSqlDriver>
#include <QSqlError>

#include <libpq-fe.h>
#include <memory>
#include <vector>

namespace outbox::store {

namespace {

PGconn *connectionOf(const QSqlDriver *driver) {
    if (!driver || !driver->isOpen())
        return nullptr;
    const QVariant handle = driver->handle();
    // The name Qt derives for the type (Qt 6: the struct behind the typedef).
    const char *type = handle.isValid() ? handle.typeName() : nullptr;
    if (!type || (qstrcmp(type, "pg_conn*") != 0 && qstrcmp(type, "PGconn*") != 0))
        return nullptr;
    return *static_cast<PGconn *const *>(handle.constData());
}

// The value as PostgreSQL's text input reads it, or nothing for NULL.
std::optional<QByteArray> parameterText(const QVariant &value) {
    if (value.isNull())
        return std::nullopt;
    switch (value.typeId()) {
    case QMetaType::Bool:
        return QByteArray(value.toBool() ? "t" : "f");
    case QMetaType::Double:
        return QByteArray::number(value.toDouble(), 'g', 17);
    case QMetaType::QByteArray:
        return value.toByteArray();
    default:
        return value.toString().toUtf8();
    }
}

struct ResultDeleter {
    void operator()(PGresult *result) const { PQclear(result); }
};

} // namespace

core::Result<BoundRows> execBound(QSqlDatabase db, const QString &sql, const QVariantList &values,
                                  const QString &context) {
    PGconn *connection = connectionOf(db.driver());
    if (!connection)
        return toError(
            QSqlError(QStringLiteral("connection not open"), QString(), QSqlError::ConnectionError),
            context);
    std::vector<std::optional<QByteArray>> texts;
    texts.reserve(size_t(values.size()));
    for (const QVariant &value : values)
        texts.push_back(parameterText(value));
    std::vector<const char *> pointers;
    std::vector<int> lengths;
    for (const auto &text : texts) {
        pointers.push_back(text ? text->constData() : nullptr);
        lengths.push_back(text ? int(text->size()) : 0);
    }
    const QByteArray statement = sql.toUtf8();
    const std::unique_ptr<PGresult, ResultDeleter> result(
        PQexecParams(connection, statement.constData(), int(pointers.size()), nullptr,
                     pointers.data(), lengths.data(), nullptr, 0));
    const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
        // Read like a QPSQL error, so toError() classifies it the same way
        // (SQLSTATE, a lost connection) and strips the same echoes.
        const QString text = QString::fromUtf8(result ? PQresultErrorMessage(result.get())
                                                      : PQerrorMessage(connection));
        const char *state = result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
        const bool lost = PQstatus(connection) == CONNECTION_BAD;
        return toError(QSqlError(QString(), text,
                                 lost ? QSqlError::ConnectionError : QSqlError::StatementError,
                                 QString::fromLatin1(state  ? state
                                                     : lost ? "08006"
                                                            : "")),
                       context);
    }
    BoundRows rows;
    const int rowCount = PQntuples(result.get());
    const int columnCount = PQnfields(result.get());
    for (int row = 0; row < rowCount; ++row) {
        QList<std::optional<QString>> cells;
        for (int column = 0; column < columnCount; ++column) {
            if (PQgetisnull(result.get(), row, column))
                cells.append(std::nullopt);
            else
                cells.append(QString::fromUtf8(PQgetvalue(result.get(), row, column),
                                               PQgetlength(result.get(), row, column)));
        }
        rows.rows.append(std::move(cells));
    }
    return rows;
}

int connectionSocket(const QSqlDriver *driver) {
    const PGconn *connection = connectionOf(driver);
    return connection ? PQsocket(connection) : -1;
}

bool readPendingInput(const QSqlDriver *driver) {
    PGconn *connection = connectionOf(driver);
    if (!connection)
        return false;
    PQconsumeInput(connection); // the notifications stay queued for QPSQL
    return PQstatus(connection) != CONNECTION_BAD;
}

} // namespace outbox::store
