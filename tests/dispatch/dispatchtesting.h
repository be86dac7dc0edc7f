#pragma once

// Helpers shared by the dispatcher and publisher tests: bulk enqueue, status
// counts, a baseline configuration, dispatchers on the test's database,
// claimed events as the publishers get them.

#include "core/conninfo.h"
#include "core/dispatcherconfig.h"
#include "dispatch/dispatcherhost.h"
#include "dispatch/dispatcherstats.h"
#include "store/database.h"
#include "store/outboxstore.h"
#include "support/pgtestcase.h"

#include <QDateTime>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QUrl>
#include <QUuid>

#include <memory>

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

// What a publisher needs of a configuration: where, and a request timeout.
inline core::DispatcherConfig publisherConfig(const QUrl &runnerUrl) {
    core::DispatcherConfig config;
    config.runnerUrl = runnerUrl;
    config.requestTimeout = core::Millis(5000);
    return config;
}

// The Standard Webhooks documentation's example secret.
inline const QString kWebhookSecret = QStringLiteral("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");

inline core::ConnInfo connInfoFor(const PgFixture &fixture, const QString &dbName) {
    return core::ConnInfo::parse(fixture.connInfo(dbName)).value();
}

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

// DispatchTestCase as the whole fixture of a suite (see PgTestSuite), with
// dispatchers on the test's database.
class DispatchTestSuite : public PgTestSuite {
protected:
    explicit DispatchTestSuite(PerTest perTest = PerTest::FreshDatabase)
        : PgTestSuite(migrateSchema, perTest) {
        qRegisterMetaType<dispatch::DispatcherStats>();
        qRegisterMetaType<dispatch::DispatcherState>();
    }

    // A dispatcher on m_dbName, not started.
    std::unique_ptr<dispatch::DispatcherHost> makeHost(const core::DispatcherConfig &config,
                                                       dispatch::PublisherFactory factory = {},
                                                       dispatch::DispatcherOptions options = {}) {
        return std::make_unique<dispatch::DispatcherHost>(connInfoFor(*m_pg, m_dbName), config,
                                                          std::move(factory), std::move(options));
    }

    // A started dispatcher that polls only every 10 s (its leases last
    // 60 s), once it listens: from then on only NOTIFY wakes it quickly.
    // Null, with a warning saying what did not happen, otherwise.
    std::unique_ptr<dispatch::DispatcherHost> startListeningHost(const QUrl &runnerUrl) {
        auto config = baseConfig(runnerUrl);
        config.pollInterval = core::Millis(10000);
        config.lease = core::Millis(60000);
        auto host = makeHost(config);
        if (!startHost(*host)) {
            qWarning("the dispatcher did not start");
            return {};
        }
        if (!QTest::qWaitFor([&] { return host->lastStats().listening; }, 10000)) {
            qWarning("the dispatcher did not LISTEN");
            return {};
        }
        return host;
    }
};

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

// An event as a claim hands it to a publisher: "billing"/"invoice.paid",
// created now.
inline store::ClaimedEvent claimedEvent(const QByteArray &payload, int attempts) {
    store::ClaimedEvent event;
    event.id = QUuid::createUuid();
    event.nameSpace = QStringLiteral("billing");
    event.topic = QStringLiteral("invoice.paid");
    event.payload = payload;
    event.attempts = attempts;
    event.createdAt = QDateTime::currentDateTimeUtc();
    return event;
}

// The event of most publisher tests: payload {"invoice_id": 42}.
inline store::ClaimedEvent invoiceEvent(int attempts = 1) {
    return claimedEvent(R"({"invoice_id": 42})", attempts);
}

// Event number `n`: payload {"n": n}, on its first, second or third attempt.
inline store::ClaimedEvent numberedEvent(int n) {
    return claimedEvent(R"({"n": )" + QByteArray::number(n) + '}', 1 + n % 3);
}

// numberedEvent(first) .. numberedEvent(first + count - 1).
inline QList<store::ClaimedEvent> numberedEvents(int count, int first = 0) {
    QList<store::ClaimedEvent> events;
    for (int i = 0; i < count; ++i)
        events << numberedEvent(first + i);
    return events;
}

} // namespace outbox::testing
