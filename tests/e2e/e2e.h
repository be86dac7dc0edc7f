#pragma once

#include "core/conninfo.h"
#include "store/database.h"
#include "support/commandline.h"
#include "support/localport.h"
#include "support/pgtestcase.h"

#include <QEventLoop>
#include <QFile>
#include <QHash>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTimer>
#include <QUrl>

#include <csignal>
#include <memory>

// Real outboxctl processes (OUTBOXCTL_PATH, set by CMake) for the
// multi-process tests: dispatchers, runners, the benchmark.
namespace outbox::testing {

// The parent's environment without anything that would point outboxctl at
// another server or sign with another secret.
inline QProcessEnvironment e2eEnvironment() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char *name :
         {"OUTBOX_DB", "OUTBOX_RUNNER_SECRET", "PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE",
          "PGUSER", "PGPASSWORD", "PGSERVICE", "QT_LOGGING_RULES", "QT_MESSAGE_PATTERN"})
        env.remove(QLatin1String(name));
    return env;
}

// A running outboxctl child. Output (stdout and stderr together) is
// collected while the test's event loop runs (QTRY_* spins it).
class CtlProcess final {
public:
    explicit CtlProcess(QStringList arguments, QProcessEnvironment env = e2eEnvironment())
        : m_arguments(std::move(arguments)) {
        m_process.setProcessEnvironment(env);
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        QObject::connect(&m_process, &QProcess::readyRead, [this] { collect(); });
    }
    ~CtlProcess() {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(5000);
        }
    }
    Q_DISABLE_COPY_MOVE(CtlProcess)

    bool start() {
        m_process.start(QStringLiteral(OUTBOXCTL_PATH), m_arguments);
        return m_process.waitForStarted(30000);
    }
    QString output() {
        collect();
        return m_output;
    }
    bool running() const { return m_process.state() == QProcess::Running; }
    qint64 pid() const { return m_process.processId(); }
    void terminate() { m_process.terminate(); } // SIGTERM
    void killHard() { m_process.kill(); }       // SIGKILL
    // Waits while still serving the event loop (other children keep being read).
    bool waitForExit(int timeoutMs) {
        if (m_process.state() == QProcess::NotRunning)
            return true;
        QEventLoop loop;
        QObject::connect(&m_process, &QProcess::finished, &loop, &QEventLoop::quit);
        QTimer::singleShot(timeoutMs, &loop, &QEventLoop::quit);
        loop.exec();
        collect();
        return m_process.state() == QProcess::NotRunning;
    }
    bool exitedNormally() const { return m_process.exitStatus() == QProcess::NormalExit; }
    int exitCode() const { return m_process.exitCode(); }
    // The value of `key=` in the last line containing `event` (e.g. the exit
    // line's delivered=N); -1 when absent.
    qint64 lastValue(const QString &event, const QString &key) {
        const QStringList lines = output().split(QLatin1Char('\n'));
        for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
            if (!it->contains(event))
                continue;
            const QRegularExpression pattern(QStringLiteral("\\b") + key +
                                             QStringLiteral("=(-?\\d+)"));
            const auto match = pattern.match(*it);
            return match.hasMatch() ? match.captured(1).toLongLong() : -1;
        }
        return -1;
    }

private:
    void collect() { m_output += QString::fromUtf8(m_process.readAll()); }

    QStringList m_arguments;
    QProcess m_process;
    QString m_output;
};

struct RunnerCounts {
    qint64 received = -1;
    qint64 delivered = -1;
    qint64 duplicates = -1;
    qint64 unique = -1;
    qint64 badSignatures = -1;
};

// `outboxctl runner` as a child process. Its counters come from a GET on
// the runner (text "received=1 delivered=1 ... unique_ids=1").
class RunnerProcess final {
public:
    // port 0 = any free port.
    bool start(int port, const QStringList &extra = {}) {
        m_process = std::make_unique<CtlProcess>(
            QStringList{QStringLiteral("runner"), QStringLiteral("--listen"),
                        QStringLiteral("127.0.0.1:%1").arg(port),
                        QStringLiteral("--stats-interval"), QStringLiteral("1s")} +
            extra);
        if (!m_process->start())
            return false;
        // "url=http://127.0.0.1:<port>/events" once it listens.
        QTimer deadline;
        deadline.setSingleShot(true);
        deadline.start(20000);
        const QRegularExpression pattern(QStringLiteral("^url=(\\S+)$"),
                                         QRegularExpression::MultilineOption);
        while (deadline.isActive() && m_process->running()) {
            const auto match = pattern.match(m_process->output());
            if (match.hasMatch()) {
                m_url = QUrl(match.captured(1));
                return true;
            }
            QEventLoop loop;
            QTimer::singleShot(20, &loop, &QEventLoop::quit);
            loop.exec();
        }
        qWarning().noquote() << "the runner did not start:" << m_process->output();
        return false;
    }
    QUrl url() const { return m_url; }
    CtlProcess &process() { return *m_process; }

    RunnerCounts counts() const {
        RunnerCounts counts;
        QNetworkAccessManager manager;
        QNetworkRequest request(m_url);
        request.setTransferTimeout(10000);
        QNetworkReply *reply = manager.get(request);
        QEventLoop loop;
        QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
        loop.exec();
        if (reply->error() != QNetworkReply::NoError) {
            qWarning().noquote() << "runner counters:" << reply->errorString();
            return counts;
        }
        QHash<QByteArray, qint64> values;
        const QList<QByteArray> words = reply->readAll().simplified().split(' ');
        for (const QByteArray &word : words) {
            const qsizetype equals = word.indexOf('=');
            if (equals > 0)
                values.insert(word.left(equals), word.mid(equals + 1).toLongLong());
        }
        counts.received = values.value("received", -1);
        counts.delivered = values.value("delivered", -1);
        counts.duplicates = values.value("duplicates", -1);
        counts.unique = values.value("unique_ids", -1);
        counts.badSignatures = values.value("bad_signatures", -1);
        return counts;
    }

private:
    std::unique_ptr<CtlProcess> m_process;
    QUrl m_url;
};

inline int freePort() {
    return closedPort();
}

// `count` due events in one statement (ids are UUID v7 like the producer's).
inline bool insertEvents(QSqlDatabase db, int count,
                         const QString &nameSpace = QStringLiteral("e2e")) {
    return sqlExec(db,
                   QStringLiteral("INSERT INTO outbox_events (id, namespace, topic, payload)"
                                  " SELECT outbox_uuid_v7(), ?::text, 'e2e.event',"
                                  "        jsonb_build_object('n', g)"
                                  "   FROM generate_series(1, ?::integer) AS g"),
                   {nameSpace, count});
}

// The first column of `sql`'s first row as a number; -1 when there is none.
inline qint64 scalar(QSqlDatabase db, const QString &sql) {
    const QString value = sqlScalar(db, sql);
    return value.isNull() ? -1 : value.toLongLong();
}

// `outboxctl --db <connInfo> dispatch --runner-url <url>` and `options`.
inline QStringList dispatchCommand(const QString &connInfo, const QString &url,
                                   const QStringList &options) {
    return QStringList{QStringLiteral("--db"), connInfo, QStringLiteral("dispatch"),
                       QStringLiteral("--runner-url"), url} +
           options;
}

inline qint64 countWhere(QSqlDatabase db, const QString &where) {
    const QString value =
        sqlScalar(db, QStringLiteral("SELECT count(*) FROM outbox_events WHERE ") + where);
    return value.isNull() ? -1 : value.toLongLong();
}

// A file holding `content`, in a directory removed with the object.
class TextFile final {
public:
    explicit TextFile(const QByteArray &content) {
        m_path = m_dir.filePath(QStringLiteral("value.txt"));
        QFile file(m_path);
        if (file.open(QIODevice::WriteOnly))
            file.write(content);
    }
    QString path() const { return m_path; }

private:
    QTemporaryDir m_dir;
    QString m_path;
};

} // namespace outbox::testing
