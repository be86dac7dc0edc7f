#include "core/outputfile.h"

#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace outbox::core {

namespace {

QString systemError(int error) {
    return QString::fromLocal8Bit(std::strerror(error));
}

// What is at `path` now, refused unless it is nothing or a regular file (and
// only nothing unless `existing` is Replace).
Result<void> checkTarget(const QString &path, OutputFile::Existing existing,
                         const QString &replaceHint) {
    struct stat st {};
    if (::lstat(QFile::encodeName(path).constData(), &st) != 0) {
        if (errno == ENOENT)
            return {};
        return Result<void>::failure(
            ErrorKind::Invalid,
            QStringLiteral("cannot write %1: %2").arg(path, systemError(errno)));
    }
    if (S_ISLNK(st.st_mode))
        return Result<void>::failure(
            ErrorKind::Invalid,
            QStringLiteral("%1 is a symbolic link; exports are not written through links (one "
                           "in a shared directory can point at a file of yours): give the real "
                           "path of the file, or a new name")
                .arg(path));
    if (!S_ISREG(st.st_mode))
        return Result<void>::failure(
            ErrorKind::Invalid,
            QStringLiteral("%1 is not a regular file (a directory, device, pipe or socket); give "
                           "the name of a file")
                .arg(path));
    if (existing == OutputFile::Existing::Refuse)
        return Result<void>::failure(
            ErrorKind::Conflict,
            QStringLiteral("%1 already exists").arg(path) +
                (replaceHint.isEmpty() ? QString() : QStringLiteral("; ") + replaceHint));
    return {};
}

} // namespace

OutputFile::OutputFile(QString path, Existing existing, QString replaceHint)
    : m_path(std::move(path))
    , m_existing(existing)
    , m_replaceHint(std::move(replaceHint)) {}

OutputFile::~OutputFile() {
    cancel();
}

Result<std::unique_ptr<OutputFile>> OutputFile::create(const QString &path, Existing existing,
                                                       const QString &replaceHint) {
    if (path.isEmpty())
        return Error{ErrorKind::Invalid, QStringLiteral("no file name given")};
    if (auto target = checkTarget(path, existing, replaceHint); !target)
        return target.error();
    std::unique_ptr<OutputFile> file(new OutputFile(path, existing, replaceHint));
    // QTemporaryFile creates exclusively (O_CREAT|O_EXCL, so never through a
    // link) and readable by the owner only.
    const QFileInfo info(path);
    file->m_temp.setFileTemplate(info.absolutePath() + QStringLiteral("/.") + info.fileName() +
                                 QStringLiteral(".XXXXXX"));
    if (!file->m_temp.open())
        return Error{ErrorKind::Invalid,
                     QStringLiteral("cannot write %1: %2; choose a folder you may write to")
                         .arg(path, file->m_temp.errorString())};
    return file;
}

Result<void> OutputFile::commit() {
    if (!m_temp.isOpen())
        return Result<void>::failure(ErrorKind::Failed,
                                     QStringLiteral("saving %1 failed: the file was already "
                                                    "closed")
                                         .arg(m_path));
    const auto failed = [this](const QString &why) {
        cancel();
        return Result<void>::failure(ErrorKind::Failed,
                                     QStringLiteral("saving %1 failed: %2").arg(m_path, why));
    };
    if (!m_temp.flush())
        return failed(m_temp.errorString());
    if (::fsync(m_temp.handle()) != 0)
        return failed(systemError(errno));
    const QByteArray from = QFile::encodeName(m_temp.fileName());
    const QByteArray to = QFile::encodeName(m_path);
    m_temp.close();
    // Checked again: the target may have changed while the export ran.
    if (auto target = checkTarget(m_path, m_existing, m_replaceHint); !target) {
        cancel();
        return target;
    }
    int moved = 0;
    if (m_existing == Existing::Replace) {
        // rename() replaces the name itself, never what a link there points at.
        moved = std::rename(from.constData(), to.constData());
    } else {
        moved = ::renameat2(AT_FDCWD, from.constData(), AT_FDCWD, to.constData(), RENAME_NOREPLACE);
        if (moved != 0 && (errno == EINVAL || errno == ENOSYS)) {
            // A file system without RENAME_NOREPLACE: link() refuses an
            // existing name just as atomically.
            moved = ::link(from.constData(), to.constData());
            if (moved == 0)
                ::unlink(from.constData());
        }
    }
    if (moved != 0) {
        const int error = errno;
        cancel();
        if (error == EEXIST)
            return checkTarget(m_path, Existing::Refuse, m_replaceHint);
        return Result<void>::failure(
            ErrorKind::Failed,
            QStringLiteral("saving %1 failed: %2").arg(m_path, systemError(error)));
    }
    m_temp.setAutoRemove(false); // it has the target's name now
    return {};
}

void OutputFile::cancel() {
    if (m_temp.autoRemove())
        m_temp.remove();
    m_temp.setAutoRemove(false);
}

} // namespace outbox::core
