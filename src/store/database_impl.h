#pragma once

// Template definitions for database.h.

namespace outbox::store {

template <typename Body>
auto inTransaction(QSqlDatabase db, const QString &context, Body &&body) -> decltype(body()) {
    if (!db.transaction()) {
        return toError(db.lastError(), context);
    }
    auto result = body();
    if (!result.ok()) {
        db.rollback();
        return result;
    }
    if (!db.commit()) {
        const auto error = toError(db.lastError(), context);
        db.rollback();
        return error;
    }
    return result;
}

template <typename Read>
auto readRows(core::Result<QSqlQuery> query, Read &&read)
    -> core::Result<QList<std::invoke_result_t<Read &, const QSqlQuery &>>> {
    if (!query)
        return query.error();
    QList<std::invoke_result_t<Read &, const QSqlQuery &>> rows;
    while (query->next())
        rows << read(std::as_const(query.value()));
    return rows;
}

} // namespace outbox::store
