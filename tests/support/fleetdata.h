#pragma once

#include "support/pgfixture.h"

#include <QSqlDatabase>
#include <QString>

// The troubles the fleet's tests give their databases.
namespace outbox::testing {

// `count` pending events of namespace "n", due since `ago` ("10 minutes").
inline bool insertDueSince(QSqlDatabase db, int count, const QString &ago) {
    return sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                  " next_attempt_at) SELECT outbox_uuid_v7(), 'n', 't', '{}',"
                                  " now() - ?::interval FROM generate_series(1, ?)"),
                   {ago, count});
}

// A minute of the history, five minutes ago, in which `dead` events died.
inline bool insertDeathsAFewMinutesAgo(QSqlDatabase db, int dead) {
    return sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_throughput_history (minute, worker_id,"
                                  " delivered, failed, dead) VALUES"
                                  " (date_trunc('minute', now()) - interval '5 min',"
                                  " gen_random_uuid(), 10, ?, ?)"),
                   {dead, dead});
}

} // namespace outbox::testing
