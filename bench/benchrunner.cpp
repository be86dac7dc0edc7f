#include "bench/benchrunner.h"

#include "bench/harness.h"
#include "devtools/devrunner.h"

#include <QEventLoop>
#include <QFile>
#include <QHash>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRandomGenerator>
#include <QTimer>

namespace outbox::bench {

qint64 BenchRunner::processId() const {
    return m_process ? m_process->processId() : 0;
}

namespace {

QString makeSecret() {
    QByteArray key(32, '\0');
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(key.data()),
                                          key.size() / qsizetype(sizeof(quint32)));
    return QStringLiteral("whsec_") + QString::fromLatin1(key.toBase64());
}

} // namespace

BenchRunner::BenchRunner()
    : m_secret(makeSecret()) {}

BenchRunner::~BenchRunner() {
    stop();
}

core::Result<void> BenchRunner::start(RunnerPlacement placement, const QString &program) {
    return placement == RunnerPlacement::Process ? startProcess(program) : startThread();
}

core::Result<void> BenchRunner::startProcess(const QString &program) {
    if (!m_dir.isValid())
        return failure(QStringLiteral("cannot create a temporary directory for the runner's "
                                      "secret: ") +
                       m_dir.errorString());
    const QString secretPath = m_dir.filePath(QStringLiteral("runner-secret"));
    QFile secretFile(secretPath);
    if (!secretFile.open(QIODevice::WriteOnly) || secretFile.write(m_secret.toLatin1()) < 0)
        return failure(QStringLiteral("cannot write the runner's secret file: ") +
                       secretFile.errorString());
    secretFile.close();

    m_process = std::make_unique<QProcess>();
    m_process->setStandardErrorFile(QProcess::nullDevice());
    m_process->start(program,
                     {QStringLiteral("runner"), QStringLiteral("--listen"),
                      QStringLiteral("127.0.0.1:0"), QStringLiteral("--secret-file"), secretPath,
                      QStringLiteral("--stats-interval"), QStringLiteral("0s")});
    if (!m_process->waitForStarted(10000))
        return failure(QStringLiteral("cannot start the runner (%1 runner): %2")
                           .arg(program, m_process->errorString()));
    // The runner prints "url=http://127.0.0.1:<port>/events" once listening.
    QByteArray output;
    while (!output.contains('\n')) {
        if (!m_process->waitForReadyRead(10000))
            return failure(QStringLiteral("the runner did not report its address within 10 s"));
        output += m_process->readAllStandardOutput();
    }
    const QByteArray line = output.left(output.indexOf('\n')).trimmed();
    if (!line.startsWith("url="))
        return failure(QStringLiteral("unexpected first line from the runner: ") +
                       QString::fromUtf8(line));
    m_url = QUrl(QString::fromLatin1(line.mid(4)));
    return {};
}

core::Result<void> BenchRunner::startThread() {
    m_thread.setObjectName(QStringLiteral("bench-runner"));
    m_runner = new devtools::DevRunner();
    m_runner->moveToThread(&m_thread);
    QObject::connect(&m_thread, &QThread::finished, m_runner, &QObject::deleteLater);
    m_thread.start();
    core::Result<void> listening;
    devtools::DevRunnerSettings settings;
    settings.secrets = {m_secret};
    QMetaObject::invokeMethod(
        m_runner,
        [&] {
            listening = m_runner->setSettings(settings);
            if (listening)
                listening = m_runner->listen();
            m_url = m_runner->url();
        },
        Qt::BlockingQueuedConnection);
    return listening;
}

core::Result<RunnerCounts> BenchRunner::counts() {
    if (m_runner) {
        const devtools::DevRunnerStats stats = m_runner->stats();
        return RunnerCounts{stats.received, stats.delivered, stats.duplicates, stats.uniqueIds,
                            stats.badSignatures};
    }
    // The child answers GET with its counters: "received=1 delivered=1 ...".
    QNetworkAccessManager manager;
    QNetworkRequest request(m_url);
    request.setAttribute(QNetworkRequest::Http2AllowedAttribute, false);
    request.setTransferTimeout(10000);
    QNetworkReply *reply = manager.get(request);
    QEventLoop loop;
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    loop.exec();
    // The reply belongs to the manager, which goes away with this scope.
    if (reply->error() != QNetworkReply::NoError)
        return failure(QStringLiteral("cannot read the runner's counters: ") +
                       reply->errorString());
    QHash<QByteArray, qint64> values;
    const QList<QByteArray> words = reply->readAll().simplified().split(' ');
    for (const QByteArray &word : words) {
        const qsizetype equals = word.indexOf('=');
        if (equals > 0)
            values.insert(word.left(equals), word.mid(equals + 1).toLongLong());
    }
    if (!values.contains("received") || !values.contains("duplicates"))
        return failure(QStringLiteral("the runner's counters are not in the expected form"));
    return RunnerCounts{values.value("received"), values.value("delivered"),
                        values.value("duplicates"), values.value("unique_ids"),
                        values.value("bad_signatures")};
}

void BenchRunner::stop() {
    if (m_process) {
        if (m_process->state() != QProcess::NotRunning) {
            m_process->terminate();
            if (!m_process->waitForFinished(5000)) {
                m_process->kill();
                m_process->waitForFinished(5000);
            }
        }
        m_process.reset();
    }
    if (m_thread.isRunning()) {
        QMetaObject::invokeMethod(
            m_runner, [runner = m_runner] { runner->close(); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
        m_runner = nullptr;
    }
}

} // namespace outbox::bench
