// The dispatcher's log lines are logfmt that a strict parser reads (they are
// written with core::LogLine): also the one that carries a PostgreSQL error
// with quotes, a backslash and '=' in it.

#include "dispatch/dispatcherhost.h"
#include "dispatchtesting.h"
#include "support/logfmt.h"

#include <QMutex>
#include <QMutexLocker>
#include <QSignalSpy>
#include <QtTest>

using namespace outbox;
using dispatch::DispatcherHost;

namespace {

// The dispatcher logs from its own thread.
QMutex g_mutex;
QStringList g_lines;

void captureDispatchLog(QtMsgType, const QMessageLogContext &context, const QString &message) {
    if (context.category && QLatin1String(context.category) == QLatin1String("outbox.dispatch")) {
        const QMutexLocker lock(&g_mutex);
        g_lines << message;
    }
}

QStringList capturedLines() {
    const QMutexLocker lock(&g_mutex);
    return g_lines;
}

} // namespace

class TestDispatcherLog : public outbox::testing::DispatchTestSuite {
    Q_OBJECT

public:
    TestDispatcherLog()
        : DispatchTestSuite(PerTest::Nothing) {}

private Q_SLOTS:
    void aServerErrorWithQuotesParses() {
        // The server's words: role "<name>" does not exist, the name as it is.
        const QString role = QStringLiteral("no \"such\" = role\\");
        core::ConnInfo info = testing::connInfoFor(*m_pg, QStringLiteral("outbox"));
        info.user = role;
        DispatcherHost host(info, testing::baseConfig(QUrl(QStringLiteral("http://127.0.0.1:9/"))));
        QSignalSpy stopped(&host, &DispatcherHost::stopped);
        const QtMessageHandler previous = qInstallMessageHandler(captureDispatchLog);
        host.start();
        const bool ended = QTest::qWaitFor([&] { return stopped.size() == 1; }, 20000);
        qInstallMessageHandler(previous);
        QVERIFY(ended);

        const QStringList lines = capturedLines();
        QVERIFY(!lines.isEmpty());
        std::optional<QString> error;
        for (const QString &line : lines) {
            const auto parsed = outbox::testing::parseLogfmt(line);
            QVERIFY2(parsed.fields, qPrintable(parsed.error));
            if (parsed.value(u"event") == QLatin1String("failed"))
                error = parsed.value(u"error");
        }
        QVERIFY2(error, qPrintable(lines.join(QLatin1Char('\n'))));
        QVERIFY2(error->contains(QStringLiteral("role \"") + role + QStringLiteral("\"")),
                 qPrintable(*error));
    }
};

QTEST_GUILESS_MAIN(TestDispatcherLog)
#include "tst_dispatcherlog.moc"
