#include "benchwindow.h"

#include "console/model/consolesettings.h"
#include "console/widgets/mainwindow.h"

namespace outbox::consolebench {

BenchWindow::BenchWindow()
    : m_qsettings(m_dir.filePath(QStringLiteral("console.ini")), QSettings::IniFormat)
    , m_settings(std::make_unique<console::ConsoleSettings>(&m_qsettings)) {}

BenchWindow::~BenchWindow() {
    destroy();
}

console::MainWindow *BenchWindow::create() {
    m_window =
        std::make_unique<console::MainWindow>(m_settings.get(), console::MainWindowOptions{});
    return m_window.get();
}

void BenchWindow::destroy() {
    m_window.reset();
}

} // namespace outbox::consolebench
