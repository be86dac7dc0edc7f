#pragma once

#include "core/result.h"

#include <QString>
#include <QStringList>

namespace outbox::core {

// Development programs ship beside the production ones instead of inside them
// (outboxctl runs outboxctl-runner and outboxctl-bench, outbox-console runs
// outbox-console-demo), the way git runs git-<command>.

// The directory of the running executable; empty when it cannot be told.
QString runningProgramDirectory();

// The program `name` in runningProgramDirectory(), else the first on PATH;
// empty when there is neither.
QString findCompanionProgram(const QString &name);

// Replaces this process with `program`, its argv being `program` and then
// `arguments`: from then on the exit code, signals and output are the
// program's. Returns only when that failed, saying why.
Error replaceProcess(const QString &program, const QStringList &arguments);

} // namespace outbox::core
