#include "console/widgets/demolauncher.h"

#include "core/companionprogram.h"

#include <QMessageBox>
#include <QProcess>

namespace outbox::console {

namespace {

const QString kDemoProgram = QStringLiteral("outbox-console-demo");

QString notInstalled() {
    return QStringLiteral("demo mode is the separate program %1, which is not installed here (not "
                          "beside outbox-console in %2, not on PATH). Install it beside "
                          "outbox-console: the outbox-console package ships it, and a build from "
                          "source makes it (packaging/dev.sh demo starts it).")
        .arg(kDemoProgram, core::runningProgramDirectory());
}

} // namespace

bool launchDemoProgram(QWidget *parent, bool readOnly) {
    const QString program = core::findCompanionProgram(kDemoProgram);
    QString problem;
    if (program.isEmpty()) {
        problem = notInstalled();
    } else {
        QStringList arguments{QStringLiteral("--demo")};
        if (readOnly) {
            arguments << QStringLiteral("--read-only");
        }
        if (QProcess::startDetached(program, arguments)) {
            return true;
        }
        problem = QStringLiteral("%1 could not be started").arg(program);
    }
    QMessageBox::warning(parent, QObject::tr("Demo mode"),
                         QObject::tr("The demo cannot start: %1").arg(problem));
    return false;
}

QString execDemoProgram(const QStringList &arguments) {
    const QString program = core::findCompanionProgram(kDemoProgram);
    if (program.isEmpty()) {
        return notInstalled();
    }
    return core::replaceProcess(program, arguments).message;
}

} // namespace outbox::console
