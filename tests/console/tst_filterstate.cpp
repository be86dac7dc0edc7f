// FilterState, headless: setters record at once and announce once per pass
// of the event loop, nothing when the filter ends where it was; and the
// navigator's row for a filter (StatusNavModel::indexFor).

#include "console/model/filterstate.h"
#include "console/model/statusnavmodel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using namespace outbox;
using console::FilterState;
using console::StatusNavModel;

namespace {

// Runs the event loop's queued work twice over: a change announced from a
// slot of the first announcement would show up in the second.
void runPasses() {
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
}

store::EventFilter announced(const QSignalSpy &spy, int i) {
    return spy.at(i).at(0).value<store::EventFilter>();
}

} // namespace

class TestFilterState final : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void startsOnPending() {
        FilterState state;
        QCOMPARE(state.filter().status, std::optional(core::Status::Pending));
        QSignalSpy changes(&state, &FilterState::changed);
        runPasses();
        QCOMPARE(changes.count(), 0);
    }

    void severalSettersOneChange() {
        FilterState state;
        QSignalSpy changes(&state, &FilterState::changed);
        state.setStatus(core::Status::Dead);
        state.setNamespace(QStringLiteral("billing"));
        state.setTopic(QStringLiteral("invoice.paid"));
        state.setText(QStringLiteral("bill-"));
        state.setErrorSignature(QStringLiteral("HTTP <n>"));
        // Recorded at once, announced later.
        QCOMPARE(state.filter().nameSpace, QStringLiteral("billing"));
        QCOMPARE(changes.count(), 0);
        runPasses();
        QCOMPARE(changes.count(), 1);
        const store::EventFilter f = announced(changes, 0);
        QCOMPARE(f, state.filter());
        QCOMPARE(f.status, std::optional(core::Status::Dead));
        QCOMPARE(f.topic, QStringLiteral("invoice.paid"));
        QCOMPARE(f.text, QStringLiteral("bill-"));
        QCOMPARE(f.errorSignature, QStringLiteral("HTTP <n>"));

        // The next pass has its own change.
        state.setText(QStringLiteral("bill-2"));
        runPasses();
        QCOMPARE(changes.count(), 2);
        QCOMPARE(announced(changes, 1).text, QStringLiteral("bill-2"));
    }

    void sameValueNoChange() {
        FilterState state;
        state.setNamespace(QStringLiteral("billing"));
        runPasses();
        QSignalSpy changes(&state, &FilterState::changed);

        state.setNamespace(QStringLiteral("billing"));
        state.setStatus(core::Status::Pending);
        state.setText(QString());
        runPasses();
        QCOMPARE(changes.count(), 0);

        // Changed and changed back within one pass: nothing to say.
        state.setNamespace(QStringLiteral("shipping"));
        state.setErrorSignature(QStringLiteral("timeout"));
        state.setNamespace(QStringLiteral("billing"));
        state.setErrorSignature(QString());
        runPasses();
        QCOMPARE(changes.count(), 0);
    }

    // A listener that writes back what it was told starts no second round.
    void echoStartsNoRound() {
        FilterState state;
        QSignalSpy changes(&state, &FilterState::changed);
        connect(&state, &FilterState::changed, &state, [&state](const store::EventFilter &f) {
            state.setStatus(*f.status);
            state.setNamespace(f.nameSpace);
            state.setErrorSignature(f.errorSignature);
        });
        state.setNamespace(QStringLiteral("billing"));
        state.setErrorSignature(QStringLiteral("timeout"));
        runPasses();
        QCOMPARE(changes.count(), 1);
    }

    void placesUnderPendingGoWithIt() {
        FilterState state;
        store::EventFilter retrying;
        retrying.status = core::Status::Pending;
        retrying.retrying = true;
        state.setText(QStringLiteral("abc"));
        state.setNamespace(QStringLiteral("billing"));
        state.setPlace(retrying);
        QCOMPARE(state.filter().retrying, std::optional(true));
        QCOMPARE(state.filter().nameSpace, QString()); // the place has none
        QCOMPARE(state.filter().text, QStringLiteral("abc"));

        state.setStatus(core::Status::Dead);
        QCOMPARE(state.filter().retrying, std::optional<bool>());
        QVERIFY(!state.filter().aggregateBlocked);

        store::EventFilter blocked;
        blocked.status = core::Status::Pending;
        blocked.aggregateBlocked = true;
        state.setPlace(blocked);
        QVERIFY(state.filter().aggregateBlocked);
        state.setStatus(core::Status::Pending); // already there: stays blocked
        QVERIFY(state.filter().aggregateBlocked);
    }

    void clearKeepsThePage() {
        FilterState state;
        state.setStatus(core::Status::Dead);
        state.setNamespace(QStringLiteral("billing"));
        state.setTenant(QUuid::createUuid());
        state.setCreatedRange(QDateTime::currentDateTimeUtc().addDays(-1), {});
        state.setPayloadContains(QStringLiteral("{\"n\": 1}"));
        runPasses();
        QSignalSpy changes(&state, &FilterState::changed);
        state.clear();
        runPasses();
        QCOMPARE(changes.count(), 1);
        store::EventFilter expected;
        expected.status = core::Status::Dead;
        QCOMPARE(announced(changes, 0), expected);
        state.clear();
        runPasses();
        QCOMPARE(changes.count(), 1);
    }

    void navigatorRowForAFilter() {
        StatusNavModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        store::StatusCounts counts;
        counts.pending = 3;
        counts.retrying = 2;
        counts.blocked = 1;
        counts.dead = 4;
        counts.topics = {
            store::TopicCount{QStringLiteral("billing"), QStringLiteral("invoice.paid"), 3, 0, 4}};
        model.applyCounts(counts);
        const auto keyOf = [&](const store::EventFilter &f) {
            return StatusNavModel::keyAt(model.indexFor(f));
        };
        store::EventFilter f;
        QVERIFY(!model.indexFor(f).isValid()); // no status, no row
        f.status = core::Status::Dead;
        QCOMPARE(keyOf(f), StatusNavModel::statusKey(core::Status::Dead));
        f.nameSpace = QStringLiteral("billing");
        QCOMPARE(keyOf(f), StatusNavModel::namespaceKey(core::Status::Dead, f.nameSpace));
        f.topic = QStringLiteral("invoice.paid");
        QCOMPARE(keyOf(f), StatusNavModel::topicKey(core::Status::Dead, f.nameSpace, f.topic));
        f.text = QStringLiteral("narrower"); // the bar's search narrows within the row
        QCOMPARE(keyOf(f), StatusNavModel::topicKey(core::Status::Dead, f.nameSpace, f.topic));
        // No processing events there: no such row, its status instead.
        f.status = core::Status::Processing;
        QCOMPARE(keyOf(f), StatusNavModel::statusKey(core::Status::Processing));

        store::EventFilter pending;
        pending.status = core::Status::Pending;
        pending.retrying = true;
        QCOMPARE(keyOf(pending), StatusNavModel::retryingKey());
        pending.retrying.reset();
        pending.aggregateBlocked = true;
        QCOMPARE(keyOf(pending), StatusNavModel::blockedKey());
        // A navigator row's own filter leads back to it.
        for (const QString &key :
             {StatusNavModel::retryingKey(), StatusNavModel::blockedKey(),
              StatusNavModel::namespaceKey(core::Status::Pending, QStringLiteral("billing"))}) {
            QCOMPARE(keyOf(StatusNavModel::filterAt(model.indexForKey(key))), key);
        }
    }
};

QTEST_MAIN(TestFilterState)
#include "tst_filterstate.moc"
