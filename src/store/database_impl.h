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

} // namespace outbox::store
