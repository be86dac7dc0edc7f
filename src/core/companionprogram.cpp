#include "core/companionprogram.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStandardPaths>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <vector>

namespace outbox::core {

QString runningProgramDirectory() {
    // /proc/self/exe works before a QCoreApplication exists (outbox-console
    // decides on --demo before it opens a window).
    const QFileInfo self(QStringLiteral("/proc/self/exe"));
    if (self.exists())
        return QFileInfo(self.canonicalFilePath()).absolutePath();
    if (QCoreApplication::instance())
        return QCoreApplication::applicationDirPath();
    return {};
}

QString findCompanionProgram(const QString &name) {
    const QString directory = runningProgramDirectory();
    if (!directory.isEmpty()) {
        const QFileInfo beside(QDir(directory).filePath(name));
        if (beside.isFile() && beside.isExecutable())
            return beside.absoluteFilePath();
    }
    return QStandardPaths::findExecutable(name);
}

Error replaceProcess(const QString &program, const QStringList &arguments) {
    std::vector<QByteArray> encoded;
    encoded.reserve(std::size_t(arguments.size()) + 1);
    encoded.push_back(QFile::encodeName(program));
    for (const QString &argument : arguments)
        encoded.push_back(QFile::encodeName(argument));
    std::vector<char *> argv;
    argv.reserve(encoded.size() + 1);
    for (QByteArray &argument : encoded)
        argv.push_back(argument.data());
    argv.push_back(nullptr);
    // Whatever this process wrote so far must come before the program's output.
    std::fflush(nullptr);
    ::execv(argv.front(), argv.data());
    const int error = errno;
    return Error{ErrorKind::Failed,
                 QStringLiteral("cannot run %1: %2")
                     .arg(program, QString::fromLocal8Bit(std::strerror(error)))};
}

} // namespace outbox::core
