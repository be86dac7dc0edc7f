#pragma once

// Helpers shared by the dispatcher tests: bulk enqueue, status counts, a baseline configuration.

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/dispatcherstats.h"
#include "store/database.h"
#include "support/pgtestcase.h"

#include <QSignalSpy>
#include <QSqlDatabase>
#include <QUrl>

namespace outbox::testing {

// The dispatcher suites' fixture: the migrated template, and the types
// their signal spies carry registered.
class DispatchTestCase : protected PgTestCase {
protected:
    bool startDispatchPg() {
        qRegisterMetaType<dispatch::DispatcherStats>();
        qRegisterMetaType<dispatch::DispatcherState>();
        return startPg(migrateSchema);
    }
};

// DispatchTestCase as the whole fixture of a suite (see PgTestSuite).
class DispatchTestSuite : public PgTestSuite {
protected:
    explicit DispatchTestSuite(PerTest perTest = PerTest::FreshDatabase)
        : PgTestSuite(migrateSchema, perTest) {
        qRegisterMetaType<dispatch::DispatcherStats>();
        qRegisterMetaType<dispatch::DispatcherState>();
    }
};

// Starts (stops) `host` and waits for its started (stopped) signal.
inline bool startHost(dispatch::DispatcherHost &host, int timeoutMs = 30000) {
    QSignalSpy started(&host, &dispatch::DispatcherHost::started);
    host.start();
    return started.wait(timeoutMs) || started.size() == 1;
}

inline bool stopHost(dispatch::DispatcherHost &host) {
    QSignalSpy stopped(&host, &dispatch::DispatcherHost::stopped);
    host.stop();
    return stopped.wait(30000) || stopped.size() == 1;
}

inline core::ConnInfo connInfoFor(const PgFixture &fixture, const QString &dbName) {
    return core::ConnInfo::parse(fixture.connInfo(dbName)).value();
}

// One statement: one transaction, one NOTIFY.
inline bool enqueueMany(QSqlDatabase db, int count,
                        const QString &nameSpace = QStringLiteral("test")) {
    return sqlExec(db,
                   QStringLiteral("SELECT outbox_enqueue(?::text, 'thing.happened', "
                                  "jsonb_build_object('n', g)) FROM generate_series(1, ?::int) g"),
                   {nameSpace, count});
}

inline int countStatus(QSqlDatabase db, const QString &status) {
    const QString value = sqlScalar(
        db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE status = ?::text"), {status});
    return value.isNull() ? -1 : value.toInt();
}

inline core::DispatcherConfig baseConfig(const QUrl &runnerUrl) {
    core::DispatcherConfig config;
    config.runnerUrl = runnerUrl;
    config.batchSize = 10;
    config.concurrency = 8;
    config.lease = core::Millis(30000);
    config.pollInterval = core::Millis(1000);
    config.requestTimeout = core::Millis(5000);
    config.baseDelay = core::Millis(50);
    config.maxDelay = core::Millis(200);
    config.maxAttempts = 5;
    config.shutdownGrace = core::Millis(2000);
    return config;
}

} // namespace outbox::testing
