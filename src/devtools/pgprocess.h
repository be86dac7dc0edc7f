#pragma once

// Internal to EmbeddedPostgres (not part of the store API): the parts that
// talk to the operating system directly — fork/exec, dropping to the
// `postgres` account, the supervisor process and /proc inspection. The
// process model is described in embeddedpostgres.cpp.

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <optional>
#include <sys/types.h>
#include <vector>

namespace outbox::devtools::detail {

struct Account {
    uid_t uid = 0;
    gid_t gid = 0;
};

// Everything a child needs, prepared before fork(): after fork() in a
// multithreaded process only async-signal-safe calls are allowed. Move-only:
// argv/envp point into `strings`, whose elements a move leaves in place.
struct ExecSpec {
    ExecSpec() = default;
    ExecSpec(ExecSpec &&) noexcept = default;
    ExecSpec &operator=(ExecSpec &&) noexcept = default;
    Q_DISABLE_COPY(ExecSpec)

    std::vector<QByteArray> strings;
    std::vector<char *> argv;
    std::vector<char *> envp;
    QByteArray workDir;
    std::optional<Account> account;
};

// `program` with `args` in `workDir`, as `account` if set; the environment is
// this process's without PG* variables, with LC_ALL=C and HOME=workDir.
ExecSpec makeExecSpec(const QString &program, const QStringList &args, const QString &workDir,
                      const std::optional<Account> &account);

// Runs `spec` in its own process group, stdin from /dev/null, stdout and
// stderr to `outputPath` (truncated). The pid, or -1 with errno set.
pid_t spawnProcess(const ExecSpec &spec, const QString &outputPath);

struct Supervised {
    pid_t supervisor = -1;
    int lifeline = -1; // write end; closing it makes the supervisor stop the server
    int error = 0;     // errno when supervisor < 0
};

// Forks the supervisor (own process group, output appended to `logPath`),
// which runs `server` and, should the lifeline reach EOF, stops it and runs
// `cleanup` (skipped when empty).
Supervised spawnSupervised(const ExecSpec &server, const ExecSpec &cleanup, const QString &logPath);

// Raw wait status, or nothing if `pid` is still running at the deadline.
std::optional<int> waitForExit(pid_t pid, int timeoutMs);

struct ProcInfo {
    char state = 0;
    pid_t ppid = 0;
};

std::optional<ProcInfo> procInfo(pid_t pid);
// A zombie counts as gone: nobody may reap orphans in a container.
bool processAlive(pid_t pid);
QList<pid_t> childrenOf(pid_t parent);

std::optional<Account> lookupAccount(const char *name);
// Whether `account` may search every directory from `path` up to the root.
bool pathTraversable(const QString &path, const Account &account);

// Creates `path` (it must not exist) readable by its owner only, owned by
// `account` if set, with `content`. 0, or the errno of what failed.
int writePrivateFile(const QString &path, const QByteArray &content,
                     const std::optional<Account> &account);
// `bytes` random bytes from the system's generator, as hex.
QByteArray randomHex(int bytes);

// A port free on 127.0.0.1 right now (or a random one if probing fails).
int freeTcpPort();

} // namespace outbox::devtools::detail
