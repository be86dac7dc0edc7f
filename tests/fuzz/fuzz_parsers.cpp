// Fuzz targets of the parsers that read what other people write: connection
// strings, durations, the runner's Retry-After, JSON payload files, and the
// development runner's hand-written HTTP request parser. Each checks
// properties beyond "does not crash" (see each target), so a wrong answer
// fails as loudly as a crash.

#include "cli/output.h"
#include "core/conninfo.h"
#include "core/duration.h"
#include "core/retrypolicy.h"
#include "devtools/devrunner.h"
#include "fuzzdriver.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QTcpSocket>
#include <QThread>
#include <QTimeZone>
#include <QUtf8StringView>

using namespace outbox;
using testing::FuzzTarget;

namespace {

QList<QByteArray> bytes(std::initializer_list<const char *> texts) {
    QList<QByteArray> list;
    for (const char *text : texts)
        list << QByteArray(text);
    return list;
}

// Accepted text reads back as the same value (libpq's parse of our own
// rendering); the rendering for QPSQL is refused or produced, never crashes.
FuzzTarget conninfoTarget() {
    return {
        .name = QStringLiteral("conninfo"),
        .seeds = bytes({"host=/run/pg dbname=app user=me",
                        "host=db port=5432 dbname='my app' user=me password='p w' sslmode=require",
                        "postgresql://me:secret@db:5432/app?sslmode=verify-full&connect_timeout=5",
                        "application_name='a;b' keepalives=1 tcp_user_timeout=3000",
                        "host=db options='-c statement_timeout=5s'", ""}),
        .dictionary = bytes({"host=", "port=", "dbname=", "user=", "password=", "sslmode=",
                             "application_name=", "options=", "'", "\\'", "postgresql://", "@", ":",
                             "?", "&", "%20", "%00", " "}),
        .run = [](const QByteArray &input, bool &accepted) -> QString {
            const auto parsed = core::ConnInfo::parse(QString::fromUtf8(input));
            accepted = parsed.ok();
            if (!parsed) {
                if (parsed.errorMessage().isEmpty())
                    return QStringLiteral("an error without a message");
                return {};
            }
            (void)parsed->qtConnectOptions();
            (void)parsed->redacted();
            const auto again = core::ConnInfo::parse(parsed->toKeyValue());
            if (!again)
                return QStringLiteral("toKeyValue() does not parse back: ") + again.errorMessage();
            if (!(again.value() == parsed.value()))
                return QStringLiteral("toKeyValue() reads back as something else");
            return {};
        }};
}

// Accepted: never negative, and formatDuration() of the value reads back as
// the same value; the bound check never crashes.
FuzzTarget durationTarget() {
    return {.name = QStringLiteral("duration"),
            .seeds = bytes({"500ms", "30s", "5m", "2h", "7d", "1h30m", "1.5s", "0s",
                            "106751991167d", "999999999999h", " 10s "}),
            .dictionary = bytes({"ms", "s", "m", "h", "d", ".", "9223372036854775807", "-", "0"}),
            .run = [](const QByteArray &input, bool &accepted) -> QString {
                const auto parsed = core::parseDuration(QString::fromUtf8(input));
                accepted = parsed.ok();
                if (!parsed)
                    return parsed.errorMessage().isEmpty()
                               ? QStringLiteral("an error without a message")
                               : QString();
                if (parsed->count() < 0)
                    return QStringLiteral("a negative duration was accepted");
                (void)core::checkLongestSetting(u"--fuzz", parsed.value());
                const QString shown = core::formatDuration(parsed.value());
                const auto back = core::parseDuration(shown);
                if (!back || back.value() != parsed.value())
                    return QStringLiteral("formatDuration() gives \"%1\", which does not read back")
                        .arg(shown);
                return {};
            }};
}

// Accepted: a delay of zero or more, and a date never further ahead than
// the largest delta-seconds value.
FuzzTarget retryAfterTarget() {
    return {.name = QStringLiteral("retry_after"),
            .seeds = bytes({"120", "0", "Wed, 21 Oct 2026 07:28:00 GMT",
                            "Wednesday, 21-Oct-26 07:28:00 GMT", "Wed Oct 21 07:28:00 2026",
                            "99999999999999999999", " 5 "}),
            .dictionary = bytes({"GMT", "Mon, ", "Oct", "Feb", "29", ":", "-", " ", "9999"}),
            .run = [](const QByteArray &input, bool &accepted) -> QString {
                const QDateTime now(QDate(2026, 10, 21), QTime(7, 0), Qt::UTC);
                const auto delay = core::parseRetryAfter(input, now);
                accepted = delay.has_value();
                if (delay && delay->count() < 0)
                    return QStringLiteral("a negative delay");
                return {};
            }};
}

// Accepted: no NUL byte and valid UTF-8 (what PostgreSQL can store);
// refused: a message saying where.
FuzzTarget jsonTarget() {
    return {.name = QStringLiteral("json_payload"),
            .seeds = bytes({R"({"invoice_id": 42})", R"([1, 2.5, "x", null, true])",
                            R"({"a": {"b": [{}]}, "big": 12345678901234567890})", R"("\u00e9")",
                            "\"\xc3\xa9\"", "  {}  "}),
            .dictionary = bytes(
                {"{", "}", "[", "]", "\"", ":", ",", "\\u0000", "\\", "1e999", "null", "\xf0\x9f"}),
            .run = [](const QByteArray &input, bool &accepted) -> QString {
                QString error;
                const auto value = cli::parseJsonValue(input, &error);
                accepted = value.has_value();
                if (!value)
                    return error.isEmpty() ? QStringLiteral("refused without a message")
                                           : QString();
                if (input.contains('\0'))
                    return QStringLiteral("a NUL byte was accepted");
                if (!QUtf8StringView(input).isValidUtf8())
                    return QStringLiteral("invalid UTF-8 was accepted");
                return {};
            }};
}

// The development runner, over a real socket: every answer is an HTTP/1.1
// response, and the runner still answers a well-formed request at the end.
// It runs in a thread of its own so that this thread can block on sockets.
class RunnerUnderTest {
public:
    RunnerUnderTest() {
        m_runner.moveToThread(&m_thread);
        m_thread.start();
        QMetaObject::invokeMethod(
            &m_runner, [this] { m_listening = m_runner.listen().ok(); },
            Qt::BlockingQueuedConnection);
    }
    ~RunnerUnderTest() {
        QMetaObject::invokeMethod(
            &m_runner, [this] { m_runner.close(); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
    Q_DISABLE_COPY_MOVE(RunnerUnderTest)

    bool listening() const { return m_listening; }

    // The bytes the runner sent back (until it closed or went quiet).
    QByteArray exchange(const QByteArray &request, int quietMs) {
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, m_runner.port());
        if (!socket.waitForConnected(2000))
            return "no connection";
        socket.write(request);
        socket.waitForBytesWritten(2000);
        QByteArray answer;
        while (socket.waitForReadyRead(quietMs))
            answer += socket.readAll();
        answer += socket.readAll();
        socket.abort();
        return answer;
    }

private:
    devtools::DevRunner m_runner;
    QThread m_thread;
    bool m_listening = false;
};

FuzzTarget devRunnerTarget(RunnerUnderTest &runner) {
    return {.name = QStringLiteral("dev_runner"),
            .seeds =
                bytes({"POST /events HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
                       "GET / HTTP/1.1\r\nHost: x\r\n\r\n",
                       "POST /events HTTP/1.0\r\nwebhook-id: 1\r\nContent-Length: 0\r\n\r\n",
                       "POST /events HTTP/1.1\r\nConnection: close\r\nContent-Length: 3\r\n\r\n{}\n"
                       "POST /events HTTP/1.1\r\nContent-Length: 0\r\n\r\n"}),
            .dictionary =
                bytes({"\r\n", "\r\n\r\n", "Content-Length: ", "Transfer-Encoding: chunked",
                       "Connection: keep-alive", "webhook-signature: v1,", "HTTP/1.1", "-1",
                       "99999999999999999999", ":"}),
            .run = [&runner](const QByteArray &input, bool &accepted) -> QString {
                const QByteArray answer = runner.exchange(input, 20);
                accepted = answer.startsWith("HTTP/1.1 2");
                if (!answer.isEmpty() && !answer.startsWith("HTTP/1.1 "))
                    return QStringLiteral("an answer that is not HTTP/1.1: ") +
                           QString::fromLatin1(answer.left(40));
                const QByteArray probe =
                    runner.exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 2000);
                if (!probe.startsWith("HTTP/1.1 200"))
                    return QStringLiteral("the runner stopped answering");
                return {};
            }};
}

} // namespace

int main(int argc, char **argv) {
    QCoreApplication app(argc, argv);
    const QStringList arguments = app.arguments().mid(1);
    // Only the runner's target needs a runner; its threads stay idle otherwise.
    std::unique_ptr<RunnerUnderTest> runner;
    QList<FuzzTarget> targets{conninfoTarget(), durationTarget(), retryAfterTarget(), jsonTarget()};
    if (!arguments.isEmpty() && arguments.first() == QLatin1String("dev_runner")) {
        runner = std::make_unique<RunnerUnderTest>();
        if (!runner->listening()) {
            std::fprintf(stderr, "fuzz dev_runner: the runner could not listen\n");
            return 1;
        }
    }
    if (runner)
        targets << devRunnerTarget(*runner);
    else
        targets << FuzzTarget{QStringLiteral("dev_runner"), {}, {}, {}};
    return testing::runFuzzer(targets, arguments);
}
