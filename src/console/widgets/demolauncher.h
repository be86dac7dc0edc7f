#pragma once

#include <QString>
#include <QStringList>

class QWidget;

namespace outbox::console {

// outbox-console holds no demo: demo mode is the program outbox-console-demo
// (the console with src/devtools/demo linked in), found beside this program
// or on PATH.

// Starts the demo program (with --demo, and --read-only when `readOnly`) as
// a process of its own. When it cannot, says why in a message box over
// `parent`. True when it started.
bool launchDemoProgram(QWidget *parent, bool readOnly);

// Replaces this process with the demo program, given `arguments` (those of
// this one, without the program name). Returns only when that failed, with
// a message that names the program and how to get it.
QString execDemoProgram(const QStringList &arguments);

} // namespace outbox::console
