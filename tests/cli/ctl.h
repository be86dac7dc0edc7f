#pragma once

#include "core/conninfo.h"
#include "store/database.h"
#include "support/commandline.h"
#include "support/localport.h"
#include "support/pgtestcase.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSqlDatabase>
#include <QString>
#include <QStringList>
#include <QTcpServer>
#include <QTest>

#include <pty.h>
#include <unistd.h>

// Runs the real outboxctl binary (OUTBOXCTL_PATH, set by CMake) as a child
// process, the way scripts and operators do.
namespace outbox::testing {

struct CtlResult {
    int exitCode = -1;
    bool finished = false; // false: crashed or timed out
    QString out;
    QString err;
    QString all() const { return out + err; }
};

// The parent's environment without anything that would point outboxctl at
// some other server.
inline QProcessEnvironment cleanEnvironment() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name : {"OUTBOX_DB", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER",
                             "PGPASSWORD", "PGSERVICE", "PGPASSFILE", "PGSERVICEFILE"})
        env.remove(QLatin1String(name));
    return env;
}

inline CtlResult runCtl(const QStringList &arguments, const QByteArray &input = {},
                        const QProcessEnvironment &env = cleanEnvironment()) {
    QProcess process;
    process.setProcessEnvironment(env);
    process.start(QStringLiteral(OUTBOXCTL_PATH), arguments);
    CtlResult result;
    if (!process.waitForStarted(30000))
        return result;
    if (!input.isEmpty())
        process.write(input);
    process.closeWriteChannel();
    result.finished =
        process.waitForFinished(120000) && process.exitStatus() == QProcess::NormalExit;
    if (!result.finished) {
        process.kill();
        process.waitForFinished(5000);
    }
    result.exitCode = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

// outboxctl with its stdin on a pseudo-terminal (stdout and stderr stay
// pipes), as at an operator's prompt: wait for the question, type the
// answer.
class TerminalCtl final {
public:
    TerminalCtl() { m_process.setProcessEnvironment(cleanEnvironment()); }
    ~TerminalCtl() {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
        if (m_master >= 0)
            ::close(m_master);
    }
    Q_DISABLE_COPY_MOVE(TerminalCtl)

    bool start(const QStringList &arguments) {
        int slave = -1;
        if (::openpty(&m_master, &slave, nullptr, nullptr, nullptr) != 0) {
            qWarning("openpty failed");
            return false;
        }
        m_process.setChildProcessModifier([slave] { ::dup2(slave, STDIN_FILENO); });
        m_process.start(QStringLiteral(OUTBOXCTL_PATH), arguments);
        const bool started = m_process.waitForStarted();
        ::close(slave);
        return started;
    }
    // Waits for the "[y/N]" of the question on stderr.
    bool waitForQuestion() {
        return QTest::qWaitFor([this] { return err().contains("[y/N]"); }, 30000);
    }
    // Types `text` on the terminal.
    bool answer(const QByteArray &text) {
        return ::write(m_master, text.constData(), size_t(text.size())) == ssize_t(text.size());
    }
    bool waitForFinished(int timeoutMs) { return m_process.waitForFinished(timeoutMs); }
    int exitCode() const { return m_process.exitCode(); }
    // All stderr so far.
    QByteArray err() {
        m_err += m_process.readAllStandardError();
        return m_err;
    }
    QString out() { return QString::fromUtf8(m_process.readAllStandardOutput()); }

private:
    QProcess m_process;
    int m_master = -1;
    QByteArray m_err;
};

inline QJsonObject parseObject(const QString &text) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(text.toUtf8(), &error);
    if (error.error != QJsonParseError::NoError)
        qWarning().noquote() << "not JSON:" << error.errorString() << text;
    return document.object();
}

// One outbox_events row in a chosen state, written directly (the dispatcher
// is not under test here). Intervals are PostgreSQL interval literals. Every
// member has a default, so that a designated initializer names only what a
// test cares about.
struct Seed {
    QString nameSpace = QStringLiteral("ns");
    QString topic = QStringLiteral("topic");
    QString status = QStringLiteral("pending");
    int attempts = 0;
    QString nextIn = QStringLiteral("0s"); // next_attempt_at = now() + nextIn
    QString leaseIn{};                     // processing: locked_until = now() + leaseIn
    QString lastError{};
    QString createdAgo = QStringLiteral("0s");
    QString updatedAgo = QStringLiteral("0s");
    QString payload = QStringLiteral("{}");
};

// Returns the new id (empty, with a warning, on failure).
inline QString seedEvent(QSqlDatabase db, const Seed &seed) {
    return sqlScalar(
        db,
        QStringLiteral(
            "INSERT INTO outbox_events (id, namespace, topic, payload, status, attempts,"
            " next_attempt_at, locked_by, locked_until, last_error, delivered_at, created_at,"
            " updated_at)"
            " VALUES (outbox_uuid_v7(), ?, ?, ?::jsonb, ?, ?, now() + ?::interval,"
            " CASE WHEN NULLIF(?, '') IS NOT NULL THEN gen_random_uuid() END,"
            " now() + NULLIF(?, '')::interval, NULLIF(?, ''),"
            " CASE WHEN ? = 'delivered' THEN now() END,"
            " now() - ?::interval, now() - ?::interval)"
            " RETURNING id"),
        {seed.nameSpace, seed.topic, seed.payload, seed.status, seed.attempts, seed.nextIn,
         seed.leaseIn, seed.leaseIn, seed.lastError, seed.status, seed.createdAgo,
         seed.updatedAgo});
}

inline QStringList seedEvents(QSqlDatabase db, const Seed &seed, int count) {
    QStringList ids;
    for (int i = 0; i < count; ++i)
        ids << seedEvent(db, seed);
    return ids;
}

} // namespace outbox::testing

// Prints the child's output when a check fails, so a failure explains itself.
#define CTL_VERIFY_EXIT(result, code)                                                              \
    do {                                                                                           \
        const auto &ctlResult_ = (result);                                                         \
        QVERIFY2(ctlResult_.finished,                                                              \
                 qPrintable(QStringLiteral("did not finish: ") + ctlResult_.all()));               \
        QVERIFY2(ctlResult_.exitCode == (code),                                                    \
                 qPrintable(QStringLiteral("exit %1, expected %2\nstdout: %3\nstderr: %4")         \
                                .arg(ctlResult_.exitCode)                                          \
                                .arg(code)                                                         \
                                .arg(ctlResult_.out, ctlResult_.err)));                            \
    } while (false)
