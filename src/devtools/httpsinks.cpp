#include "devtools/httpsinks.h"

#include "core/companionprogram.h"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QThread>
#include <QUrlQuery>

namespace outbox::devtools {

namespace {

core::Error failure(const QString &message) {
    return core::Error{core::ErrorKind::Failed, message};
}

QString makeSecret() {
    QByteArray key(32, '\0');
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(key.data()),
                                          key.size() / qsizetype(sizeof(quint32)));
    return QStringLiteral("whsec_") + QString::fromLatin1(key.toBase64());
}

} // namespace

SinkProcess::~SinkProcess() {
    terminate();
}

void SinkProcess::stop() {
    terminate();
}

void SinkProcess::terminate() {
    if (!m_process)
        return;
    if (m_process->state() != QProcess::NotRunning) {
        m_process->terminate();
        if (!m_process->waitForFinished(5000)) {
            m_process->kill();
            m_process->waitForFinished(5000);
        }
    }
    m_process.reset();
}

RunnerProcess::RunnerProcess()
    : m_secret(makeSecret()) {}

core::Result<void> RunnerProcess::start() {
    const QString name = QStringLiteral("outboxctl-runner");
    const QString program = core::findCompanionProgram(name);
    if (program.isEmpty())
        return failure(QStringLiteral("%1 is neither beside this program nor on PATH; build or "
                                      "install it with outboxctl")
                           .arg(name));
    m_process = std::make_unique<QProcess>();
    m_process->setStandardErrorFile(QProcess::nullDevice());
    // The secret is made up for this run and guards nothing after it, so it
    // may be seen on the command line.
    m_process->start(program, {QStringLiteral("--listen"), QStringLiteral("127.0.0.1:0"),
                               QStringLiteral("--secret"), m_secret,
                               QStringLiteral("--stats-interval"), QStringLiteral("0s")});
    if (!m_process->waitForStarted(10000))
        return failure(QStringLiteral("cannot start the runner (%1): %2")
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

core::Result<RunnerCounts> RunnerProcess::counts() {
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
    const QUrlQuery values(QString::fromLatin1(reply->readAll().simplified().replace(' ', '&')));
    const auto value = [&values](const char *key) {
        return values.queryItemValue(QLatin1String(key)).toLongLong();
    };
    if (!values.hasQueryItem(QStringLiteral("received")))
        return failure(QStringLiteral("the runner's counters are not in the expected form"));
    return RunnerCounts{value("duplicates"), value("bad_signatures")};
}

NginxProcess::NginxProcess() = default;

NginxProcess::~NginxProcess() {
    stop();
}

core::Result<void> NginxProcess::start() {
    const QString nginx = QStandardPaths::findExecutable(
        QStringLiteral("nginx"), {QStringLiteral("/usr/sbin"), QStringLiteral("/usr/local/sbin")});
    if (nginx.isEmpty())
        return failure(QStringLiteral("nginx is not installed; install nginx-light "
                                      "(packaging/dev.sh deps), or leave the nginx measurement "
                                      "out with --only"));
    m_dir = std::make_unique<QTemporaryDir>();
    if (!m_dir->isValid())
        return failure(QStringLiteral("cannot create a directory for nginx: ") +
                       m_dir->errorString());
    quint16 port = 0;
    {
        QTcpServer probe; // a free port, released for nginx
        if (!probe.listen(QHostAddress::LocalHost, 0))
            return failure(QStringLiteral("no free port for nginx: ") + probe.errorString());
        port = probe.serverPort();
    }
    // One process, in the foreground, nothing written outside the directory.
    const QString dir = m_dir->path();
    QFile conf(m_dir->filePath(QStringLiteral("nginx.conf")));
    if (!conf.open(QIODevice::WriteOnly))
        return failure(
            QStringLiteral("cannot write %1: %2").arg(conf.fileName(), conf.errorString()));
    conf.write(QStringLiteral("daemon off;\nmaster_process off;\npid %1/nginx.pid;\n"
                              "error_log %1/error.log warn;\n"
                              "events { worker_connections 4096; }\n"
                              "http {\n  access_log off;\n"
                              "  client_body_temp_path %1/body;\n  proxy_temp_path %1/proxy;\n"
                              "  fastcgi_temp_path %1/fastcgi;\n  uwsgi_temp_path %1/uwsgi;\n"
                              "  scgi_temp_path %1/scgi;\n"
                              "  keepalive_requests 100000000;\n  keepalive_timeout 300s;\n"
                              "  server {\n    listen 127.0.0.1:%2;\n"
                              "    location / { return 204; }\n  }\n}\n")
                   .arg(dir)
                   .arg(port)
                   .toUtf8());
    conf.close();
    m_process = std::make_unique<QProcess>();
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    m_process->start(nginx,
                     {QStringLiteral("-p"), dir + QLatin1Char('/'), QStringLiteral("-c"),
                      conf.fileName(), QStringLiteral("-e"), dir + QStringLiteral("/error.log")});
    if (!m_process->waitForStarted(10000))
        return failure(QStringLiteral("cannot start %1: %2").arg(nginx, m_process->errorString()));
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < 10000) {
        if (m_process->state() == QProcess::NotRunning) {
            QFile log(dir + QStringLiteral("/error.log"));
            const QByteArray why = log.open(QIODevice::ReadOnly) ? log.readAll() : QByteArray();
            return failure(QStringLiteral("nginx exited at start: ") +
                           QString::fromUtf8(m_process->readAll() + why).trimmed());
        }
        QTcpSocket socket;
        socket.connectToHost(QHostAddress::LocalHost, port);
        if (socket.waitForConnected(200)) {
            m_url = QUrl(QStringLiteral("http://127.0.0.1:%1/events").arg(port));
            return {};
        }
        QThread::msleep(50);
    }
    return failure(QStringLiteral("nginx did not listen on port %1 within 10 s").arg(port));
}

void NginxProcess::stop() {
    SinkProcess::stop();
    m_dir.reset();
}

} // namespace outbox::devtools
