#pragma once

// Helpers for the long-running outboxctl commands (dispatch, runner, bench):
// one-line key=value logs, HOST:PORT parsing, secret files and a graceful
// stop on SIGINT/SIGTERM. Header-only so that the commands can share them.

#include "cli/commandparser.h"
#include "cli/interrupt.h"
#include "cli/logging.h"
#include "core/logline.h"
#include "store/database.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QHostAddress>
#include <QLoggingCategory>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sys/stat.h>
#include <utility>

namespace outbox::cli {

// One line per message on stderr: "ts=<UTC> level=<level> logger=<category>
// <message>". Library messages are already key=value (core::LogLine:
// "event=... k=v"); anything else (Qt's own warnings) becomes msg="...".
inline void serviceMessageHandler(QtMsgType type, const QMessageLogContext &context,
                                  const QString &message) {
    const char *level = "info";
    switch (type) {
    case QtDebugMsg:
        level = "debug";
        break;
    case QtInfoMsg:
        level = "info";
        break;
    case QtWarningMsg:
        level = "warning";
        break;
    case QtCriticalMsg:
        level = "error";
        break;
    case QtFatalMsg:
        level = "fatal";
        break;
    }
    if (store::isDriverNoise(message)) {
        if (!lcCli().isDebugEnabled())
            return;
        level = "debug";
    }
    static const QRegularExpression structuredStart(QStringLiteral("^[a-z_][a-z0-9_.-]*="));
    core::LogLine line;
    line.add("ts", QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs))
        .add("level", QLatin1String(level))
        .add("logger", QLatin1String(context.category ? context.category : "default"));
    // A LogLine's text is one line with its values quoted; anything else,
    // and anything with a line break in it, is one quoted value.
    const bool structured = structuredStart.match(message).hasMatch() &&
                            !message.contains(QLatin1Char('\n')) &&
                            !message.contains(QLatin1Char('\r'));
    if (!structured)
        line.add("msg", message);
    const QByteArray bytes =
        (structured ? line.text() + QLatin1Char(' ') + message : line.text()).toUtf8() + '\n';
    std::fwrite(bytes.constData(), 1, size_t(bytes.size()), stderr);
    std::fflush(stderr);
    if (type == QtFatalMsg)
        std::abort();
}

// Installs the handler above for the rest of the process (these commands own
// it until exit). Info lines always; debug lines (one per claim or request)
// with --verbose. The rules replace the quieter ones the command line sets
// for the short commands (cli.cpp); QT_LOGGING_RULES still wins over both.
inline void installServiceLogging(bool verbose) {
    qInstallMessageHandler(serviceMessageHandler);
    QLoggingCategory::setFilterRules(
        verbose || isVerbose() ? QStringLiteral("outbox.*.debug=true\noutbox.*.info=true")
                               : QStringLiteral("outbox.*.debug=false\noutbox.*.info=true"));
}

// "HOST:PORT", "[v6]:PORT", "localhost:PORT" or ":PORT" (all interfaces).
// Host names other than localhost are refused: a listener binds an address.
inline core::Result<std::pair<QHostAddress, quint16>> parseListenAddress(const QString &flag,
                                                                         const QString &text) {
    const auto refuse = [&](const QString &why) {
        return usage(
            QStringLiteral("--%1 '%2': %3; use e.g. --%1 127.0.0.1:8080").arg(flag, text, why));
    };
    const qsizetype colon = text.lastIndexOf(QLatin1Char(':'));
    if (colon < 0)
        return refuse(QStringLiteral("no port"));
    QString host = text.left(colon).trimmed();
    bool ok = false;
    const uint port = text.mid(colon + 1).toUInt(&ok);
    if (!ok || port > 65535)
        return refuse(QStringLiteral("the port must be a number from 0 to 65535"));
    if (host.startsWith(QLatin1Char('[')) && host.endsWith(QLatin1Char(']')))
        host = host.mid(1, host.size() - 2);
    QHostAddress address;
    if (host.isEmpty() || host == QLatin1String("*"))
        address = QHostAddress::Any;
    else if (host.compare(QLatin1String("localhost"), Qt::CaseInsensitive) == 0)
        address = QHostAddress::LocalHost;
    else if (!address.setAddress(host))
        return refuse(QStringLiteral("'%1' is not an IP address").arg(host));
    return std::pair<QHostAddress, quint16>(address, quint16(port));
}

// A file systemd passed with LoadCredential=NAME:... (in
// $CREDENTIALS_DIRECTORY, readable by the service only, never in the
// environment or on a command line), or empty when there is none.
inline QString credentialFile(const QString &name) {
    const QString directory = qEnvironmentVariable("CREDENTIALS_DIRECTORY");
    if (directory.isEmpty())
        return {};
    const QString path = directory + QLatin1Char('/') + name;
    return QFile::exists(path) ? path : QString();
}

// Whether `path` is one of those. systemd makes them 0400 and lets the
// service's user read them through an ACL entry, whose mask stat() shows as
// group bits: their mode says nothing about who else may read them.
inline bool isCredentialFile(const QString &path) {
    const QString directory = qEnvironmentVariable("CREDENTIALS_DIRECTORY");
    return !directory.isEmpty() && path.startsWith(directory + QLatin1Char('/'));
}

// Secrets or tokens from a file: one per non-empty line, surrounding blanks
// trimmed. Errors name the file and the flag, never the content. A file that
// other accounts may read or change is used, with a warning naming the fix.
inline core::Result<QStringList> readSecretLines(const QString &flag, const QString &path) {
    const QString source = isCredentialFile(path) ? QStringLiteral("the systemd credential ") +
                                                        QFileInfo(path).fileName()
                                                  : QStringLiteral("--") + flag;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return usage(
            QStringLiteral("%1: cannot read '%2': %3").arg(source, path, file.errorString()));
    struct stat st {};
    if (!isCredentialFile(path) && ::fstat(file.handle(), &st) == 0 &&
        (st.st_mode & (S_IRWXG | S_IRWXO)) != 0)
        qCWarning(lcCli) << core::LogLine("secret_file_permissions")
                                .add("option", QString(QStringLiteral("--") + flag))
                                .add("file", path)
                                .add("mode", QStringLiteral("%1").arg(uint(st.st_mode & 07777), 4,
                                                                      8, QLatin1Char('0')))
                                .add("error", QStringLiteral("other accounts may read or change "
                                                             "this secret; run: chmod 600 %1")
                                                  .arg(path));
    QStringList lines;
    const QList<QByteArray> raw = file.readAll().split('\n');
    for (const QByteArray &line : raw) {
        const QString trimmed = QString::fromUtf8(line).trimmed();
        if (!trimmed.isEmpty())
            lines.append(trimmed);
    }
    if (lines.isEmpty())
        return usage(
            QStringLiteral("%1: '%2' is empty; put the value on the first line").arg(source, path));
    return lines;
}

// The Standard Webhooks secrets of `dispatch` and `runner`: those already
// given (runner's --secret), plus the lines of --secret-file; when there are
// none, $OUTBOX_RUNNER_SECRET (space-separated); when that is empty too, the
// systemd credential "webhook-secret" (one per line). Empty: unsigned.
inline core::Result<QStringList> webhookSecrets(const CommandParser &parser,
                                                QStringList given = {}) {
    if (parser.isSet(QStringLiteral("secret-file"))) {
        auto lines = readSecretLines(QStringLiteral("secret-file"),
                                     parser.value(QStringLiteral("secret-file")));
        if (!lines)
            return lines.error();
        given += lines.value();
    }
    if (given.isEmpty()) {
        const QString fromEnvironment = QProcessEnvironment::systemEnvironment()
                                            .value(QStringLiteral("OUTBOX_RUNNER_SECRET"))
                                            .trimmed();
        given = fromEnvironment.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    }
    if (const QString credential = credentialFile(QStringLiteral("webhook-secret"));
        given.isEmpty() && !credential.isEmpty())
        return readSecretLines(QStringLiteral("secret-file"), credential);
    return given;
}

// --secret-file, bound to `target`: webhookSecrets() with the values of the
// option `given` (runner's --secret), if any.
inline Option secretFileOption(const char *help, QStringList &target, const QString &given = {}) {
    return customOption("secret-file <file>", help,
                        [&target, given](const CommandParser &parser) -> core::Result<void> {
                            auto secrets = webhookSecrets(
                                parser, given.isEmpty() ? QStringList() : parser.values(given));
                            if (!secrets)
                                return secrets.error();
                            target = secrets.value();
                            return {};
                        });
}

// Calls `onInterrupt` (in this thread, from the event loop) once after the
// first SIGINT or SIGTERM; a second signal ends the process at once. The
// InterruptGuard's flag is polled: signal handlers may do nothing else, and
// a 50 ms reaction is plenty for a shutdown.
class InterruptWatcher final {
public:
    explicit InterruptWatcher(std::function<void()> onInterrupt)
        : m_onInterrupt(std::move(onInterrupt)) {
        m_timer.setInterval(50);
        QObject::connect(&m_timer, &QTimer::timeout, [this] {
            if (!m_guard.interrupted())
                return;
            m_timer.stop();
            m_onInterrupt();
        });
        m_timer.start();
    }
    Q_DISABLE_COPY_MOVE(InterruptWatcher)

private:
    InterruptGuard m_guard;
    QTimer m_timer;
    std::function<void()> m_onInterrupt;
};

} // namespace outbox::cli
