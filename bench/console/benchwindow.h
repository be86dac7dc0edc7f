#pragma once

#include <QSettings>
#include <QTemporaryDir>

#include <memory>

namespace outbox::console {
class ConsoleSettings;
class MainWindow;
} // namespace outbox::console

namespace outbox::consolebench {

// The console's main window with settings of its own (a fresh INI file in a
// temporary directory): every run starts like a first start, and the
// user's real settings are never read or written.
class BenchWindow final {
public:
    BenchWindow();
    ~BenchWindow();
    Q_DISABLE_COPY_MOVE(BenchWindow)

    console::MainWindow *create(); // the real MainWindow, default options
    console::MainWindow *window() const { return m_window.get(); }
    void destroy();

private:
    QTemporaryDir m_dir;
    QSettings m_qsettings;
    std::unique_ptr<console::ConsoleSettings> m_settings;
    std::unique_ptr<console::MainWindow> m_window;
};

} // namespace outbox::consolebench
