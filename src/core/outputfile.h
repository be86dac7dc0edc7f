#pragma once

#include "core/result.h"

#include <QIODevice>
#include <QString>
#include <QTemporaryFile>

#include <memory>

namespace outbox::core {

// A file written by an export (outboxctl export --output, the console's
// exports), which holds payloads and so personal data. The one owner of the
// rules for opening such a target:
// - the data goes to a new file beside the target (readable by its owner
//   only, 0600, created exclusively under a random name) and is moved onto
//   the target's name only when complete: a stopped or failed export never
//   leaves a file that looks complete;
// - the target's name is never followed: a symbolic link there (planted in a
//   shared directory to make the writer overwrite a file it owns) and
//   anything that is not a regular file (a device node, a pipe, a
//   directory) are refused, checked when opening and again at the move;
// - an existing regular file is replaced only when the caller says so, and
//   "not replacing" is atomic (the move fails if a file appeared meanwhile).
class OutputFile final {
public:
    enum class Existing { Refuse, Replace };

    // Checks the target and creates the temporary file. `replaceHint` ends the
    // message when the target exists and Existing::Refuse was asked for
    // (e.g. "add --overwrite to replace it").
    static Result<std::unique_ptr<OutputFile>> create(const QString &path, Existing existing,
                                                      const QString &replaceHint = {});
    ~OutputFile(); // removes the temporary file unless committed
    Q_DISABLE_COPY_MOVE(OutputFile)

    QIODevice &device() { return m_temp; }
    const QString &path() const { return m_path; }
    // Flushes to disk and moves the file onto the target's name.
    Result<void> commit();
    // Removes the temporary file; the target is left as it was.
    void cancel();

private:
    OutputFile(QString path, Existing existing, QString replaceHint);

    QString m_path;
    Existing m_existing;
    QString m_replaceHint;
    QTemporaryFile m_temp;
};

} // namespace outbox::core
