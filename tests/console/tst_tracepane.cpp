// Trace context in the console against a real cluster: the event pane shows
// an event's trace id, as a link to the trace viewer of the connection
// profile when it has one, and "attempt N of M" against the event's own
// limit; the filter bar's trace id field narrows the view to the trace.

#include "console/model/eventtablemodel.h"
#include "console/widgets/filterbar.h"
#include "windowtestbase.h"

#include <QLabel>
#include <QLineEdit>
#include <QtTest>

using namespace outbox;
using namespace outbox::testing;

namespace {

const QString kParent = QStringLiteral("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
const QString kTraceId = QStringLiteral("4bf92f3577b34da6a3ce929d0e0e4736");

} // namespace

class TestTracePane : public WindowTestBase {
    Q_OBJECT

private:
    QString insertTraced(const QString &traceparent, int maxAttempts) {
        return scalar(QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload,"
                                     " status, attempts, last_error, max_attempts, traceparent)"
                                     " VALUES (outbox_uuid_v7(), 'billing', 'invoice.paid', '{}',"
                                     " 'dead', 3, 'HTTP 503', ?::integer, nullif(?, ''))"
                                     " RETURNING id"),
                      {maxAttempts, traceparent});
    }

    QLabel *traceLabel() const { return part<QLabel>(QStringLiteral("traceId")); }

private Q_SLOTS:
    void paneLinksTheTraceOfTheProfile() {
        console::ConnectionProfile profile;
        profile.name = QStringLiteral("traced");
        profile.connInfo = m_pg->connInfo(m_dbName);
        profile.traceUrlTemplate = QStringLiteral("https://jaeger.local/trace/{trace_id}");
        m_settings->saveProfile(profile);
        QVERIFY(console::traceUrlTemplateProblem(profile.traceUrlTemplate).isEmpty());
        QVERIFY(
            !console::traceUrlTemplateProblem(QStringLiteral("https://jaeger.local/")).isEmpty());
        QVERIFY(!console::traceUrlTemplateProblem(QStringLiteral("file:///{trace_id}")).isEmpty());

        const QString traced = insertTraced(kParent, 3);
        QVERIFY(!traced.isEmpty());
        openWindow();
        m_window->connectTo(m_settings->profile(QStringLiteral("traced"))->toConnInfo().value(),
                            QStringLiteral("traced"));
        QTRY_VERIFY2_WITH_TIMEOUT(isConnected(), qPrintable(connectionText()), kWindowTimeout);
        console::EventView *view = showLoaded(core::Status::Dead, 1);
        QVERIFY(!QTest::currentTestFailed());
        QCOMPARE(clickRows(view, {QUuid::fromString(traced)}), 1);
        QTRY_VERIFY_WITH_TIMEOUT(traceLabel() && traceLabel()->text().contains(kTraceId),
                                 kWindowTimeout);
        QVERIFY2(traceLabel()->text().contains(QLatin1String("href=\"https://jaeger.local/trace/") +
                                               kTraceId),
                 qPrintable(traceLabel()->text()));
        QVERIFY(traceLabel()->openExternalLinks());
        QVERIFY2(detailExplanation().contains(QLatin1String("Dead after attempt 3 of 3")),
                 qPrintable(detailExplanation()));
    }

    void paneShowsThePlainTraceIdWithoutATemplate() {
        const QString traced = insertTraced(kParent, 5);
        openWindow();
        console::EventView *view = showLoaded(core::Status::Dead, 1);
        QVERIFY(!QTest::currentTestFailed());
        QCOMPARE(clickRows(view, {QUuid::fromString(traced)}), 1);
        QTRY_VERIFY_WITH_TIMEOUT(traceLabel() && traceLabel()->text() == kTraceId, kWindowTimeout);
        QCOMPARE(traceLabel()->textFormat(), Qt::PlainText);
        QVERIFY(traceLabel()->textInteractionFlags() & Qt::TextSelectableByMouse);
    }

    void filterBarNarrowsToTheTrace() {
        insertTraced(kParent, 5);
        insertTraced(kParent, 5);
        insertTraced(QStringLiteral("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"), 5);
        insertTraced(QString(), 5);
        openWindow();
        console::EventView *view = showLoaded(core::Status::Dead, 4);
        QVERIFY(!QTest::currentTestFailed());
        auto *edit = part<QLineEdit>(QStringLiteral("traceEdit"));
        QVERIFY(edit);
        edit->setText(QStringLiteral("not a trace"));
        QTRY_VERIFY_WITH_TIMEOUT(!part<console::FilterBar>()->isValid(), kWindowTimeout);
        QVERIFY(part<console::FilterBar>()->problem().contains(QLatin1String("is not a trace id")));
        edit->setText(kTraceId.toUpper());
        QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 2, kWindowTimeout);
        for (const auto &event : view->model()->events())
            QCOMPARE(event.traceparent, std::optional<QString>(kParent));
        part<console::FilterBar>()->clear();
        QTRY_COMPARE_WITH_TIMEOUT(view->model()->rowCount(), 4, kWindowTimeout);
        QVERIFY(edit->text().isEmpty());
    }
};

QTEST_MAIN(TestTracePane)
#include "tst_tracepane.moc"
