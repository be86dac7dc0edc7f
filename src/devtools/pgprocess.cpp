#include "devtools/pgprocess.h"

#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QRandomGenerator>
#include <QThread>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace outbox::devtools::detail {

namespace {

// --- async-signal-safe helpers (run between fork and exec) ---

[[noreturn]] void childDie(const char *message) {
    [[maybe_unused]] const ssize_t n = ::write(2, message, std::strlen(message));
    ::_exit(127);
}

void closeFrom(int first) {
    if (::close_range(unsigned(first), ~0U, 0) != 0) {
        for (int fd = first; fd < 4096; ++fd)
            ::close(fd);
    }
}

// stdin from nullFd, stdout/stderr to outFd; `keep` (if >= 0) becomes fd 3.
void redirectStdio(int nullFd, int outFd, int keep) {
    const int n = ::fcntl(nullFd, F_DUPFD, 10);
    const int o = ::fcntl(outFd, F_DUPFD, 10);
    const int k = keep >= 0 ? ::fcntl(keep, F_DUPFD, 10) : -1;
    if (n < 0 || o < 0 || (keep >= 0 && k < 0))
        childDie("embedded postgres: could not set up file descriptors\n");
    ::dup2(n, 0);
    ::dup2(o, 1);
    ::dup2(o, 2);
    if (k >= 0) {
        ::dup2(k, 3);
        ::fcntl(3, F_SETFD, FD_CLOEXEC);
    }
    closeFrom(k >= 0 ? 4 : 3);
}

void resetSignals() {
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2})
        ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

[[noreturn]] void execChild(const ExecSpec &spec) {
    resetSignals();
    if (spec.account) {
        const gid_t gid = spec.account->gid;
        if (::setgroups(1, &gid) != 0 || ::setgid(gid) != 0 || ::setuid(spec.account->uid) != 0)
            childDie("embedded postgres: could not switch to the postgres user\n");
    }
    if (::chdir(spec.workDir.constData()) != 0)
        childDie("embedded postgres: could not enter the cluster directory\n");
    ::execve(spec.argv[0], spec.argv.data(), spec.envp.data());
    childDie("embedded postgres: could not execute the server binary\n");
}

// The supervisor: run the server, exit with its status; if the lifeline
// (fd 3) reaches EOF, the owning process is gone: shut the server down and
// run `cleanup` (removes the cluster directory nobody else will remove).
[[noreturn]] void superviseChild(const ExecSpec &spec, const ExecSpec &cleanup) {
    struct sigaction ign = {};
    ign.sa_handler = SIG_IGN;
    for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP})
        ::sigaction(sig, &ign, nullptr);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &dfl, nullptr);
    const pid_t server = ::_Fork();
    if (server < 0)
        childDie("embedded postgres: fork failed\n");
    if (server == 0)
        execChild(spec);
    for (;;) {
        int status = 0;
        if (::waitpid(server, &status, WNOHANG) == server)
            ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
        struct pollfd pfd = {3, POLLIN, 0};
        if (::poll(&pfd, 1, 50) <= 0)
            continue;
        char byte = 0;
        const ssize_t n = ::read(3, &byte, 1);
        if (n > 0 || (n < 0 && (errno == EINTR || errno == EAGAIN)))
            continue;
        ::kill(server, SIGQUIT); // immediate shutdown; the postmaster stops its children
        bool stopped = false;
        for (int i = 0; i < 200 && !stopped; ++i) { // ~10 s
            stopped = ::waitpid(server, &status, WNOHANG) == server;
            const struct timespec pause = {0, 50'000'000};
            if (!stopped)
                ::nanosleep(&pause, nullptr);
        }
        if (!stopped) {
            ::kill(server, SIGKILL);
            ::waitpid(server, &status, 0);
        }
        if (cleanup.argv.size() > 1)
            execChild(cleanup);
        ::_exit(1);
    }
}

bool canTraverse(const QString &dir, const Account &account) {
    struct stat st = {};
    if (::stat(QFile::encodeName(dir).constData(), &st) != 0)
        return false;
    if (st.st_uid == account.uid)
        return st.st_mode & S_IXUSR;
    if (st.st_gid == account.gid)
        return st.st_mode & S_IXGRP;
    return st.st_mode & S_IXOTH;
}

} // namespace

ExecSpec makeExecSpec(const QString &program, const QStringList &args, const QString &workDir,
                      const std::optional<Account> &account) {
    ExecSpec spec;
    spec.workDir = QFile::encodeName(workDir);
    spec.account = account;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    const QStringList keys = env.keys();
    for (const QString &key : keys) {
        if (key.startsWith(QLatin1String("PG")))
            env.remove(key); // PGDATA, PGPORT, PGOPTIONS... would override our choices
    }
    env.insert(QStringLiteral("LC_ALL"), QStringLiteral("C")); // English, parseable log lines
    env.insert(QStringLiteral("HOME"), workDir);
    spec.strings.push_back(QFile::encodeName(program));
    for (const QString &arg : args)
        spec.strings.push_back(arg.toLocal8Bit());
    const qsizetype argc = spec.strings.size();
    for (const QString &entry : env.toStringList())
        spec.strings.push_back(entry.toLocal8Bit());
    for (qsizetype i = 0; i < qsizetype(spec.strings.size()); ++i)
        (i < argc ? spec.argv : spec.envp).push_back(spec.strings[size_t(i)].data());
    spec.argv.push_back(nullptr);
    spec.envp.push_back(nullptr);
    return spec;
}

pid_t spawnProcess(const ExecSpec &spec, const QString &outputPath) {
    const int outFd = ::open(QFile::encodeName(outputPath).constData(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int nullFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t pid = (outFd >= 0 && nullFd >= 0) ? ::fork() : -1;
    if (pid == 0) {
        ::setpgid(0, 0);
        redirectStdio(nullFd, outFd, -1);
        execChild(spec);
    }
    const int savedErrno = errno; // close() below may overwrite it
    if (outFd >= 0)
        ::close(outFd);
    if (nullFd >= 0)
        ::close(nullFd);
    errno = savedErrno;
    return pid;
}

Supervised spawnSupervised(const ExecSpec &server, const ExecSpec &cleanup,
                           const QString &logPath) {
    int pipeFds[2] = {-1, -1};
    const int logFd = ::open(QFile::encodeName(logPath).constData(),
                             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const int nullFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const bool fdsOk = logFd >= 0 && nullFd >= 0 && ::pipe2(pipeFds, O_CLOEXEC) == 0;
    const pid_t pid = fdsOk ? ::fork() : -1;
    if (pid == 0) {
        ::setpgid(0, 0); // keep a terminal's Ctrl-C away from the server; we stop it ourselves
        redirectStdio(nullFd, logFd, pipeFds[0]);
        superviseChild(server, cleanup);
    }
    const int savedErrno = errno;
    ::close(logFd);
    ::close(nullFd);
    if (pipeFds[0] >= 0)
        ::close(pipeFds[0]);
    if (pid < 0) {
        if (pipeFds[1] >= 0)
            ::close(pipeFds[1]);
        return {-1, -1, savedErrno};
    }
    return {pid, pipeFds[1], 0};
}

std::optional<int> waitForExit(pid_t pid, int timeoutMs) {
    const QDeadlineTimer deadline(timeoutMs);
    for (;;) {
        int status = 0;
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid || (r < 0 && errno == ECHILD))
            return status;
        if (deadline.hasExpired())
            return std::nullopt;
        QThread::msleep(10);
    }
}

std::optional<ProcInfo> procInfo(pid_t pid) {
    QFile file(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    const QByteArray stat = file.readAll();
    const qsizetype close = stat.lastIndexOf(')'); // comm may contain spaces and parens
    const QList<QByteArray> fields = stat.mid(close + 2).split(' ');
    if (close < 0 || fields.size() < 2 || fields[0].isEmpty())
        return std::nullopt;
    return ProcInfo{fields[0].at(0), pid_t(fields[1].toInt())};
}

bool processAlive(pid_t pid) {
    const auto info = procInfo(pid);
    return info && info->state != 'Z' && info->state != 'X';
}

QList<pid_t> childrenOf(pid_t parent) {
    QList<pid_t> result;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs);
    for (const QString &entry : entries) {
        bool numeric = false;
        const pid_t pid = pid_t(entry.toInt(&numeric));
        if (!numeric)
            continue;
        const auto info = procInfo(pid);
        if (info && info->ppid == parent)
            result.append(pid);
    }
    return result;
}

int writePrivateFile(const QString &path, const QByteArray &content,
                     const std::optional<Account> &account) {
    const QByteArray name = QFile::encodeName(path);
    const int fd = ::open(name.constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    const bool written =
        fd >= 0 && ::write(fd, content.constData(), size_t(content.size())) == content.size() &&
        (!account || ::fchown(fd, account->uid, account->gid) == 0);
    const int error = written ? 0 : errno;
    if (fd >= 0)
        ::close(fd);
    return error;
}

QByteArray randomHex(int bytes) {
    QByteArray raw(bytes, Qt::Uninitialized);
    for (char &c : raw)
        c = char(QRandomGenerator::system()->bounded(256));
    return raw.toHex();
}

std::optional<Account> lookupAccount(const char *name) {
    struct passwd pwd = {};
    struct passwd *found = nullptr;
    std::vector<char> buffer(16384);
    if (::getpwnam_r(name, &pwd, buffer.data(), buffer.size(), &found) != 0 || !found)
        return std::nullopt;
    return Account{found->pw_uid, found->pw_gid};
}

bool pathTraversable(const QString &path, const Account &account) {
    QDir dir(QDir::cleanPath(QFileInfo(path).absoluteFilePath()));
    for (;;) {
        if (!canTraverse(dir.path(), account))
            return false;
        if (dir.isRoot())
            return true;
        dir.setPath(QFileInfo(dir.path()).path());
    }
}

int freeTcpPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int port = 0;
    if (fd >= 0) {
        sockaddr_in addr = {};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(0x7f000001U);
        socklen_t len = sizeof addr;
        if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), len) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) == 0)
            port = ntohs(addr.sin_port);
        ::close(fd);
    }
    return port > 0 ? port : int(QRandomGenerator::global()->bounded(20000, 60000));
}

} // namespace outbox::devtools::detail
