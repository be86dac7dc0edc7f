#include "devtools/embeddedpostgres.h"

#include "devtools/logging.h"
#include "devtools/pgprocess.h"
#include "store/session.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLoggingCategory>
#include <QProcess>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QStringList>
#include <QTemporaryDir>
#include <QThread>
#include <QUrl>
#include <QVersionNumber>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

// Process model: start() forks a small supervisor (plain C, no exec) that
// forks and execs `postgres` and then watches a "lifeline" pipe whose write
// end only this process holds. If this process dies without running the
// destructor (crash, SIGKILL, test timeout) the pipe reaches EOF and the
// supervisor shuts the server down immediately: no stray servers. Thread exit
// does not matter (unlike PR_SET_PDEATHSIG). When running as root the child
// drops to the `postgres` account itself (setgroups/setgid/setuid) instead of
// going through runuser, so signals reach the postmaster directly and no PAM
// session is opened per start. stop() sends SIGINT, which is exactly what
// `pg_ctl stop -m fast` does.
// The OS-level pieces (fork/exec, the supervisor, /proc) are in pgprocess.cpp.

namespace outbox::devtools {

namespace {

using core::ErrorKind;
using core::Result;
using detail::Account;
using detail::childrenOf;
using detail::ExecSpec;
using detail::freeTcpPort;
using detail::lookupAccount;
using detail::makeExecSpec;
using detail::pathTraversable;
using detail::processAlive;
using detail::procInfo;
using detail::randomHex;
using detail::spawnProcess;
using detail::spawnSupervised;
using detail::Supervised;
using detail::waitForExit;
using detail::writePrivateFile;

constexpr int kStartTimeoutMs = 60'000;
constexpr int kStopTimeoutMs = 60'000;
constexpr int kInitdbTimeoutMs = 120'000;
constexpr int kMaxPortAttempts = 5;
const char kInstallHint[] = "install the server binaries, e.g. `apt install postgresql-15` on "
                            "Debian/Ubuntu, or set OUTBOX_PG_BINDIR to their directory";

QString logTail(const QString &path, qint64 from, int lines = 25) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    file.seek(std::max<qint64>(from, file.size() - 16384));
    QStringList all = QString::fromLocal8Bit(file.readAll()).trimmed().split(QLatin1Char('\n'));
    if (all.size() > lines)
        all = all.mid(all.size() - lines);
    return all.join(QLatin1Char('\n'));
}

bool hasExecutable(const QString &dir, const QString &name) {
    const QFileInfo info(dir + QLatin1Char('/') + name);
    return info.isFile() && info.isExecutable();
}

bool isServerBinDir(const QString &dir) {
    return hasExecutable(dir, QStringLiteral("initdb")) &&
           hasExecutable(dir, QStringLiteral("postgres"));
}

QString quoteConnValue(const QString &value) {
    const bool plain = !value.isEmpty() && std::none_of(value.begin(), value.end(), [](QChar c) {
        return c.isSpace() || c == QLatin1Char('\'') || c == QLatin1Char('\\');
    });
    if (plain)
        return value;
    QString escaped = value;
    escaped.replace(QLatin1Char('\\'), QLatin1String("\\\\"));
    escaped.replace(QLatin1Char('\''), QLatin1String("\\'"));
    return QLatin1Char('\'') + escaped + QLatin1Char('\'');
}

} // namespace

struct EmbeddedPostgres::Private {
    Options options;
    QString binDir;
    std::unique_ptr<QTemporaryDir> tempDir;
    QString root;
    std::optional<Account> account; // set when running as root
    QString password;               // of the superuser, for TCP connections
    int port = 0;
    bool initialized = false;
    pid_t supervisor = -1;
    int lifeline = -1; // write end; closing it makes the supervisor stop the server

    QString dataDir() const { return root + QLatin1String("/data"); }
    QString socketDir() const { return root + QLatin1String("/sock"); }
    QString logPath() const { return root + QLatin1String("/server.log"); }

    Result<void> prepareDirectory();
    Result<void> initdb();
    Result<void> spawnServer();
    Result<void> waitReady(qint64 logOffset, const QDeadlineTimer &deadline);
    Result<void> createDatabase();
    bool running();
    void finished();
    pid_t postmaster() const;
    bool shutdown(int signal, int timeoutMs);
    void hardKill();
};

Result<void> EmbeddedPostgres::Private::prepareDirectory() {
    QStringList bases{QDir::tempPath()};
    if (account && !bases.contains(QLatin1String("/tmp")))
        bases.append(QStringLiteral("/tmp"));
    for (const QString &base : std::as_const(bases)) {
        if (account && !pathTraversable(base, *account)) {
            qCInfo(lcDevtools) << "the postgres user cannot reach" << base << "- trying the next";
            continue;
        }
        tempDir = std::make_unique<QTemporaryDir>(base + QLatin1String("/outbox-pg-XXXXXX"));
        if (!tempDir->isValid()) {
            const QString why = tempDir->errorString();
            tempDir.reset();
            return Result<void>::failure(
                ErrorKind::Failed,
                QStringLiteral("Could not create a temporary directory in %1: %2. Set TMPDIR to "
                               "a writable directory.")
                    .arg(base, why));
        }
        break;
    }
    if (!tempDir) {
        return Result<void>::failure(
            ErrorKind::Invalid,
            QStringLiteral("The postgres user cannot reach %1 (a parent directory is not "
                           "searchable by it). Set TMPDIR to a directory every user can "
                           "traverse, such as /tmp.")
                .arg(QDir::tempPath()));
    }
    root = tempDir->path();
    // sun_path holds 108 bytes; libpq and the server fail obscurely beyond it.
    if (QFile::encodeName(socketDir() + QLatin1String("/.s.PGSQL.65535.lock")).size() > 107) {
        return Result<void>::failure(ErrorKind::Invalid,
                                     QStringLiteral("The temporary directory %1 is too long for "
                                                    "a unix socket path. Set TMPDIR to a shorter "
                                                    "directory, such as /tmp.")
                                         .arg(root));
    }
    const QByteArray rootPath = QFile::encodeName(root);
    const QByteArray sockPath = QFile::encodeName(socketDir());
    // The socket accepts the superuser without a password (trust): only the
    // cluster's own account may enter its directory. When running as root
    // the server runs as postgres, and root itself still gets in (it needs no
    // permission); the root directory lets postgres and root traverse it.
    const mode_t rootMode = account ? 0711 : 0700;
    if (::mkdir(sockPath.constData(), 0700) != 0 || ::chmod(rootPath.constData(), rootMode) != 0 ||
        ::chmod(sockPath.constData(), 0700) != 0 ||
        (account && (::chown(rootPath.constData(), account->uid, account->gid) != 0 ||
                     ::chown(sockPath.constData(), account->uid, account->gid) != 0))) {
        return Result<void>::failure(
            ErrorKind::PermissionDenied,
            QStringLiteral("Could not prepare %1 for the postgres user: %2.")
                .arg(root, QString::fromLocal8Bit(std::strerror(errno))));
    }
    return {};
}

Result<void> EmbeddedPostgres::Private::initdb() {
    const QString outputPath = root + QLatin1String("/initdb.log");
    // TCP is open to every local user: there the superuser needs a password,
    // a random one known only to this process (scram-sha-256). The socket,
    // behind its private directory, stays password-free.
    password = QString::fromLatin1(randomHex(24));
    const QString passwordFile = root + QLatin1String("/initdb.pw");
    if (const int error = writePrivateFile(passwordFile, password.toUtf8() + '\n', account))
        return Result<void>::failure(
            ErrorKind::Failed,
            QStringLiteral("Could not write %1: %2.")
                .arg(passwordFile, QString::fromLocal8Bit(std::strerror(error))));
    const auto removePasswordFile = qScopeGuard([&passwordFile] { QFile::remove(passwordFile); });
    const QStringList args{QStringLiteral("-D"),
                           dataDir(),
                           QStringLiteral("--auth-local=trust"),
                           QStringLiteral("--auth-host=scram-sha-256"),
                           QStringLiteral("--pwfile=") + passwordFile,
                           QStringLiteral("-U"),
                           options.superuser,
                           QStringLiteral("--no-sync"),
                           QStringLiteral("-E"),
                           QStringLiteral("UTF8"),
                           QStringLiteral("--locale=C")};
    const ExecSpec spec = makeExecSpec(binDir + QLatin1String("/initdb"), args, root, account);
    const pid_t pid = spawnProcess(spec, outputPath);
    if (pid < 0) {
        return Result<void>::failure(ErrorKind::Failed,
                                     QStringLiteral("Could not run initdb: %1.")
                                         .arg(QString::fromLocal8Bit(std::strerror(errno))));
    }
    const std::optional<int> status = waitForExit(pid, kInitdbTimeoutMs);
    if (!status) {
        ::killpg(pid, SIGKILL);
        (void)waitForExit(pid, 10'000);
        return Result<void>::failure(ErrorKind::Failed,
                                     QStringLiteral("initdb did not finish within %1 s:\n%2")
                                         .arg(kInitdbTimeoutMs / 1000)
                                         .arg(logTail(outputPath, 0)));
    }
    if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0) {
        return Result<void>::failure(ErrorKind::Failed,
                                     QStringLiteral("initdb failed (exit status %1):\n%2")
                                         .arg(*status)
                                         .arg(logTail(outputPath, 0)));
    }
    return {};
}

Result<void> EmbeddedPostgres::Private::spawnServer() {
    const auto quoted = [](QString dir) -> QString {
        return QLatin1Char('"') + dir.replace(QLatin1Char('"'), QLatin1String("\"\"")) +
               QLatin1Char('"');
    };
    QStringList settings{
        QStringLiteral("listen_addresses=") +
            (options.tcp ? QStringLiteral("127.0.0.1") : QString()),
        QStringLiteral("unix_socket_directories=") + quoted(socketDir()),
        QStringLiteral("max_connections=200"),
        QStringLiteral("shared_buffers=128MB"),
        QStringLiteral("logging_collector=off"),
    };
    if (options.fastAndUnsafe) {
        settings << QStringLiteral("fsync=off") << QStringLiteral("synchronous_commit=off")
                 << QStringLiteral("full_page_writes=off");
    }
    settings << options.serverSettings; // last one wins: callers override ours
    QStringList args{QStringLiteral("-D"), dataDir(), QStringLiteral("-p"), QString::number(port)};
    for (const QString &setting : std::as_const(settings))
        args << QStringLiteral("-c") << setting;

    const ExecSpec spec = makeExecSpec(binDir + QLatin1String("/postgres"), args, root, account);
    const QString rm = QStandardPaths::findExecutable(QStringLiteral("rm"));
    const ExecSpec cleanup =
        rm.isEmpty() ? ExecSpec{}
                     : makeExecSpec(rm, {QStringLiteral("-rf"), QStringLiteral("--"), root},
                                    QStringLiteral("/"), std::nullopt);
    const Supervised spawned = spawnSupervised(spec, cleanup, logPath());
    if (spawned.supervisor < 0) {
        return Result<void>::failure(
            ErrorKind::Failed, QStringLiteral("Could not start postgres: %1.")
                                   .arg(QString::fromLocal8Bit(std::strerror(spawned.error))));
    }
    supervisor = spawned.supervisor;
    lifeline = spawned.lifeline;
    return {};
}

Result<void> EmbeddedPostgres::Private::waitReady(qint64 logOffset,
                                                  const QDeadlineTimer &deadline) {
    const QString pidFile = dataDir() + QLatin1String("/postmaster.pid");
    while (!deadline.hasExpired()) {
        if (!running()) {
            return Result<void>::failure(
                ErrorKind::Unavailable,
                QStringLiteral("PostgreSQL exited during startup (log %1):\n%2")
                    .arg(logPath(), logTail(logPath(), logOffset)));
        }
        QFile file(pidFile);
        if (file.open(QIODevice::ReadOnly)) {
            const QList<QByteArray> lines = file.readAll().split('\n');
            // Line 8 is the postmaster status; "ready" once it accepts connections.
            if (lines.size() >= 8 && lines[7].trimmed() == "ready") {
                const auto info = procInfo(pid_t(lines[0].trimmed().toInt()));
                if (info && info->ppid == supervisor)
                    return {};
            }
        }
        QThread::msleep(20);
    }
    return Result<void>::failure(
        ErrorKind::Unavailable,
        QStringLiteral("PostgreSQL did not accept connections within %1 s (log %2):\n%3")
            .arg(kStartTimeoutMs / 1000)
            .arg(logPath(), logTail(logPath(), logOffset)));
}

Result<void> EmbeddedPostgres::Private::createDatabase() {
    core::ConnInfo info;
    info.host = socketDir();
    info.port = port;
    info.dbname = QStringLiteral("postgres");
    info.user = options.superuser;
    store::Session session(
        info, {.applicationName = QStringLiteral("outbox-embedded"), .connectTimeoutSeconds = 10});
    if (const auto opened = session.open(); !opened) {
        return Result<void>::failure(
            ErrorKind::Unavailable,
            QStringLiteral("Could not connect to the new cluster: %1").arg(opened.errorMessage()));
    }
    return store::createDatabaseIfMissing(session, options.database);
}

bool EmbeddedPostgres::Private::running() {
    if (supervisor <= 0)
        return false;
    int status = 0;
    const pid_t r = ::waitpid(supervisor, &status, WNOHANG);
    if (r == supervisor || (r < 0 && errno == ECHILD)) {
        finished();
        return false;
    }
    return true;
}

void EmbeddedPostgres::Private::finished() {
    supervisor = -1;
    if (lifeline >= 0)
        ::close(lifeline);
    lifeline = -1;
}

pid_t EmbeddedPostgres::Private::postmaster() const {
    // The supervisor's only child is the postmaster, even before postmaster.pid exists.
    const QList<pid_t> children = childrenOf(supervisor);
    return children.isEmpty() ? -1 : children.first();
}

bool EmbeddedPostgres::Private::shutdown(int signal, int timeoutMs) {
    const pid_t pm = postmaster();
    if (pm > 0)
        ::kill(pm, signal);
    if (!waitForExit(supervisor, timeoutMs))
        return false;
    finished();
    return true;
}

void EmbeddedPostgres::Private::hardKill() {
    const pid_t pm = postmaster();
    const QList<pid_t> backends = pm > 0 ? childrenOf(pm) : QList<pid_t>{};
    // Postmaster first, while the supervisor lives to reap it: an orphaned
    // zombie would keep postmaster.pid "in use" where nothing reaps orphans.
    ::kill(pm > 0 ? pm : supervisor, SIGKILL);
    for (pid_t backend : backends)
        ::kill(backend, SIGKILL); // they would exit anyway, but may still hold shared memory
    if (!waitForExit(supervisor, 30'000)) {
        ::kill(supervisor, SIGKILL);
        (void)waitForExit(supervisor, 10'000);
    }
    finished();
    const QDeadlineTimer deadline(30'000);
    while (std::any_of(backends.begin(), backends.end(), processAlive) && !deadline.hasExpired())
        QThread::msleep(10);
    QFile::remove(dataDir() + QLatin1String("/postmaster.pid")); // its owner is dead
}

EmbeddedPostgres::EmbeddedPostgres()
    : d(std::make_unique<Private>()) {}

EmbeddedPostgres::~EmbeddedPostgres() {
    if (isRunning()) {
        const Result<void> stopped = stop();
        if (!stopped)
            qCWarning(lcDevtools).noquote() << stopped.errorMessage();
    }
    if (d->tempDir && !d->tempDir->remove())
        qCWarning(lcDevtools) << "could not remove the cluster directory" << d->root;
}

Result<void> EmbeddedPostgres::start(const Options &options) {
    if (isRunning())
        return Result<void>::failure(ErrorKind::Conflict,
                                     QStringLiteral("The embedded PostgreSQL is already running."));
    if (options.database.isEmpty() || options.superuser.isEmpty())
        return Result<void>::failure(ErrorKind::Invalid,
                                     QStringLiteral("The embedded PostgreSQL needs a database "
                                                    "and a superuser name."));
    for (const QString &setting : options.serverSettings) {
        if (setting.indexOf(QLatin1Char('=')) < 1)
            return Result<void>::failure(ErrorKind::Invalid,
                                         QStringLiteral("Server setting \"%1\" is not of the form "
                                                        "name=value, e.g. work_mem=64MB.")
                                             .arg(setting));
    }
    if (d->initialized && options.superuser != d->options.superuser)
        return Result<void>::failure(ErrorKind::Invalid,
                                     QStringLiteral("The cluster was created with superuser %1; "
                                                    "it cannot change to %2.")
                                         .arg(d->options.superuser, options.superuser));
    d->options = options;
    if (!d->initialized) {
        Result<QString> bin = findBinDirectory();
        if (!bin)
            return bin.error();
        d->binDir = bin.value();
        d->account.reset();
        if (::geteuid() == 0) {
            d->account = lookupAccount("postgres");
            if (!d->account)
                return Result<void>::failure(
                    ErrorKind::Invalid,
                    QStringLiteral("Running as root, but PostgreSQL refuses to run as root and "
                                   "there is no `postgres` system user to run it as. Install "
                                   "postgresql-15 (which creates it) or run as a regular user."));
        }
        Result<void> prepared = d->prepareDirectory();
        if (prepared)
            prepared = d->initdb();
        if (!prepared) {
            d->tempDir.reset();
            return prepared;
        }
        d->initialized = true;
        d->port = freeTcpPort();
    }

    const QDeadlineTimer deadline(kStartTimeoutMs);
    for (int portAttempt = 1;;) {
        const qint64 logOffset = QFileInfo(d->logPath()).size();
        Result<void> ready = d->spawnServer();
        if (ready)
            ready = d->waitReady(logOffset, deadline);
        if (ready)
            break;
        if (d->running())
            d->hardKill(); // never leave a half-started server behind
        const QString log = logTail(d->logPath(), logOffset);
        if (options.tcp && log.contains(QLatin1String("could not bind")) &&
            portAttempt++ < kMaxPortAttempts) {
            d->port = freeTcpPort(); // someone took the port between probe and bind
            continue;
        }
        if (log.contains(QLatin1String("pre-existing shared memory block")) &&
            !deadline.hasExpired()) {
            QThread::msleep(200); // backends of a killed server are still exiting
            continue;
        }
        return ready;
    }
    Result<void> created = d->createDatabase();
    if (!created) {
        d->hardKill();
        return created;
    }
    return {};
}

Result<void> EmbeddedPostgres::stop() {
    if (!isRunning())
        return {};
    if (d->shutdown(SIGINT, kStopTimeoutMs))
        return {};
    qCWarning(lcDevtools) << "fast shutdown timed out; stopping immediately";
    if (!d->shutdown(SIGQUIT, 10'000))
        d->hardKill();
    return Result<void>::failure(ErrorKind::Failed,
                                 QStringLiteral("PostgreSQL did not shut down within %1 s and was "
                                                "stopped immediately; the next start runs crash "
                                                "recovery.")
                                     .arg(kStopTimeoutMs / 1000));
}

Result<void> EmbeddedPostgres::restart() {
    if (!d->initialized)
        return Result<void>::failure(
            ErrorKind::Invalid, QStringLiteral("restart() needs a cluster; call start() first."));
    Result<void> stopped = stop();
    if (!stopped)
        return stopped;
    return start(d->options);
}

void EmbeddedPostgres::kill() {
    if (isRunning())
        d->hardKill();
}

bool EmbeddedPostgres::isRunning() const {
    return d->running();
}
QString EmbeddedPostgres::socketDirectory() const {
    return d->root.isEmpty() ? QString() : d->socketDir();
}
int EmbeddedPostgres::port() const {
    return d->port;
}
QString EmbeddedPostgres::host() const {
    return d->options.tcp ? QStringLiteral("127.0.0.1") : socketDirectory();
}
QString EmbeddedPostgres::superuser() const {
    return d->options.superuser;
}
QString EmbeddedPostgres::database() const {
    return d->options.database;
}
QString EmbeddedPostgres::dataDirectory() const {
    return d->root.isEmpty() ? QString() : d->dataDir();
}
QString EmbeddedPostgres::binDirectory() const {
    return d->binDir;
}

QString EmbeddedPostgres::connInfo(const QString &database) const {
    return QStringLiteral("host=%1 port=%2 dbname=%3 user=%4")
        .arg(quoteConnValue(socketDirectory()))
        .arg(d->port)
        .arg(quoteConnValue(database.isEmpty() ? d->options.database : database),
             quoteConnValue(d->options.superuser));
}

QString EmbeddedPostgres::uri(const QString &database) const {
    if (!d->options.tcp)
        return {};
    const QString db = database.isEmpty() ? d->options.database : database;
    return QStringLiteral("postgresql://") +
           QString::fromLatin1(QUrl::toPercentEncoding(d->options.superuser)) + QLatin1Char(':') +
           QString::fromLatin1(QUrl::toPercentEncoding(d->password)) +
           QStringLiteral("@127.0.0.1:") + QString::number(d->port) + QLatin1Char('/') +
           QString::fromLatin1(QUrl::toPercentEncoding(db));
}

QString EmbeddedPostgres::password() const {
    return d->password;
}

Result<QString> EmbeddedPostgres::findBinDirectory() {
    const QString forced = qEnvironmentVariable("OUTBOX_PG_BINDIR");
    if (!forced.isEmpty()) {
        if (isServerBinDir(forced))
            return forced;
        return Result<QString>::failure(
            ErrorKind::NotFound,
            QStringLiteral("OUTBOX_PG_BINDIR=%1 does not contain the PostgreSQL server binaries "
                           "initdb and postgres; point it at e.g. /usr/lib/postgresql/15/bin or "
                           "unset it.")
                .arg(forced));
    }
    const QString pgConfig = QStandardPaths::findExecutable(QStringLiteral("pg_config"));
    if (!pgConfig.isEmpty()) {
        QProcess process;
        process.start(pgConfig, {QStringLiteral("--bindir")});
        if (process.waitForFinished(10'000) && process.exitCode() == 0) {
            const QString dir = QString::fromLocal8Bit(process.readAllStandardOutput()).trimmed();
            if (isServerBinDir(dir))
                return dir;
        }
    }
    // Debian/Ubuntu keep each major version apart; pg_config may belong to libpq-dev only.
    QStringList versions =
        QDir(QStringLiteral("/usr/lib/postgresql")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    std::sort(versions.begin(), versions.end(), [](const QString &a, const QString &b) {
        return QVersionNumber::fromString(a) > QVersionNumber::fromString(b);
    });
    for (const QString &version : std::as_const(versions)) {
        const QString dir = QStringLiteral("/usr/lib/postgresql/%1/bin").arg(version);
        if (isServerBinDir(dir))
            return dir;
    }
    return Result<QString>::failure(
        ErrorKind::NotFound,
        QStringLiteral("The PostgreSQL server binaries (initdb, postgres) were not found via "
                       "pg_config --bindir or in /usr/lib/postgresql/*/bin; %1.")
            .arg(QLatin1String(kInstallHint)));
}

} // namespace outbox::devtools
